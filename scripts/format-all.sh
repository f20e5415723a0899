#!/bin/sh
# The one reformatting commit of issue 29, run once after the other branches have merged:
#   sh scripts/format-all.sh
# Formats every TypeScript and JavaScript file biome.json covers, applies the lint fixes Biome can make (the
# "unsafe" ones too: template literals, optional chains, unused imports and bindings; none changes what the
# code does), then checks: `biome check .` must report nothing, and `tsc` must still pass. It stages nothing and
# commits nothing; what is left for a hand is printed, and the script exits 1.
set -eu
cd "$(dirname "$0")/.."

long_lines() {
  git ls-files '*.ts' '*.mts' '*.js' '*.mjs' | grep -vE '^(generated|docs|dist)/' | xargs awk 'length > 120' | wc -l
}

echo "lines over 120 characters before: $(long_lines)"
# Until a pass changes nothing (at most 5): a lint fix can leave a line that only the next pass formats. Each
# pass exits 1 while any diagnostic remains; the final check below is the verdict.
previous=''
for pass in 1 2 3 4 5; do
  npx biome check --write --unsafe . >/dev/null 2>&1 || true
  current=$(git diff | cksum)
  [ "$current" = "$previous" ] && break
  previous=$current
done
echo "lines over 120 characters after:  $(long_lines) (strings, template literals and comments, which no formatter breaks)"
echo "files changed: $(git diff --name-only | wc -l)"

if ! npx biome check .; then
  echo 'format-all: the diagnostics above need a hand (no automatic fix); fix them, then run npx biome check .' >&2
  exit 1
fi
npm run typecheck
echo 'format-all: clean. Commit it alone: git commit -am "Format the code with Biome (scripts/format-all.sh)"'
