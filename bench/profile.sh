#!/usr/bin/env bash
# CPU-profile the compiled gateway in steady state, the way perf-kit's tools/profile.sh profiles its baselines:
# the kit's fake upstream (paced streams) on CPU 1, `dist/main.js` on CPU 0 with the kit's profiler preload,
# a warm-up, then a profile of SECS seconds of load, summarised by the kit's tools/profile-summary.mjs. Prints
# the event-loop delay (monitorEventLoopDelay, 1 ms resolution) of the warm-up and of the measured window too.
#
#   bench/profile.sh json  [SECS]   chat JSON passthrough, wrk -c32 (saturation)
#   bench/profile.sh sse   [SECS]   chat SSE passthrough, CONNS (200) concurrent paced streams
#   bench/profile.sh anth  [SECS]   Anthropic Messages streams translated to the chat upstream
#   bench/profile.sh open  [SECS]   chat JSON at 1,000 req/s open loop (the kit's driver); CPU µs/request
#
# PERF_KIT names a copy of ../shared/perf-kit with its npm ci done (bench/README.md); extra node flags
# (`--trace-gc`) go in NODE_FLAGS; EXTRA_YAML is appended to the config (a `limits:` block, say) and the environment
# reaches the gateway (OMNIGATE_REDIS_URL, OMNIGATE_ADMIN_KEY). CONFIG_FILE replaces the whole config (its
# `${UPSTREAM_URL}` becomes the fake upstream's address), e.g. a model on two deployments. Results land in a fresh folder under /tmp, printed at the end.
set -euo pipefail
MODE=${1:?json, sse, anth or open}; SECS=${2:-8}
KIT=${PERF_KIT:-/tmp/perf-kit}; ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT=$(mktemp -d /tmp/omnigate-profile-$MODE-XXXX); mkdir -p "$OUT/data"
node "$ROOT/scripts/ensure-build.mjs"
if [ -n "${CONFIG_FILE:-}" ]; then sed 's#${UPSTREAM_URL}#http://127.0.0.1:18079/v1#g' "$CONFIG_FILE" > "$OUT/omnigate.yaml"; else
cat > "$OUT/omnigate.yaml" <<YAML
providers:
  fake:
    type: openai-compatible
    base_url: http://127.0.0.1:18079/v1
    max_connections: 1024
models:
  - provider: fake
    model: gpt-4o-mini
    id: gpt-4o-mini
YAML
fi
[ -n "${EXTRA_YAML:-}" ] && printf '%s\n' "$EXTRA_YAML" >> "$OUT/omnigate.yaml"
cat > "$OUT/eld.cjs" <<'JS'
// SIGUSR1 prints the event-loop delay histogram since the last SIGUSR1 to stderr, then resets it.
const { monitorEventLoopDelay } = require('node:perf_hooks');
const h = monitorEventLoopDelay({ resolution: 1 }); h.enable();
const ms = (n) => (n / 1e6).toFixed(2);
process.on('SIGUSR1', () => { process.stderr.write(`event-loop delay ms: p50 ${ms(h.percentile(50))} p99 ${ms(h.percentile(99))} p99.9 ${ms(h.percentile(99.9))} max ${ms(h.max)}\n`); h.reset(); });
JS
PORT=18079 taskset -c 1 node "$KIT/upstream/fake-upstream.mjs" >"$OUT/upstream.log" 2>&1 & UP=$!
(cd "$ROOT" && PROF_OUT="$OUT/steady.cpuprofile" PORT=18078 HOST=127.0.0.1 NODE_ENV=production OMNIGATE_DATA_DIR="$OUT/data" \
  OMNIGATE_API_KEYS=sk-perf-kit OMNIGATE_CONFIG="$OUT/omnigate.yaml" \
  exec taskset -c 0 node -r "$KIT/tools/prof-preload.cjs" -r "$OUT/eld.cjs" ${NODE_FLAGS:-} dist/main.js >"$OUT/sut.log" 2>"$OUT/sut.err") & SUT=$!
trap 'kill $SUT $UP 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:18078/health >/dev/null && break; sleep 0.2; done
BODY='{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a concise assistant. Answer in one short paragraph."},{"role":"user","content":"In two sentences, explain what an API gateway does for applications that call large language models."}],"temperature":0.2,"max_tokens":128,"user":"perf-kit"}'
URL_PATH=/v1/chat/completions; CONNS=${CONNS:-200}
case $MODE in
  json) CONNS=32 ;;
  sse) BODY=${BODY%\}}',"stream":true}' ;;
  anth) URL_PATH=/anthropic/v1/messages
        BODY='{"model":"gpt-4o-mini","max_tokens":128,"stream":true,"system":"You are a concise assistant.","messages":[{"role":"user","content":"In two sentences, explain what an API gateway does."}]}' ;;
  open) ;;
  *) echo "unknown mode $MODE" >&2; exit 2 ;;
esac
printf 'wrk.method="POST"\nwrk.body=[==[%s]==]\nwrk.headers["Content-Type"]="application/json"\nwrk.headers["Authorization"]="Bearer sk-perf-kit"\n' "$BODY" > "$OUT/post.lua"
load() {
  if [ "$MODE" = open ]; then
    taskset -c 1 node "$KIT/driver/load.mjs" '{"mode":"open","url":"http://127.0.0.1:18078","path":"'$URL_PATH'","headers":{"authorization":"Bearer sk-perf-kit"},"body":'"$BODY"',"rate":1000,"durationMs":'$(( $1 * 1000 ))',"connections":256}'
  else
    taskset -c 1 wrk -t1 -c"$CONNS" -d"$1"s --timeout 5s -s "$OUT/post.lua" "http://127.0.0.1:18078$URL_PATH"
  fi
}
load 3 >/dev/null                              # warm-up
kill -USR1 $SUT; kill -USR2 $SUT               # event-loop delay of the warm-up; the profiler starts
TICKS=$(awk '{print $14+$15}' /proc/$SUT/stat)
load "$SECS" | tee "$OUT/load.txt"
TICKS=$(( $(awk '{print $14+$15}' /proc/$SUT/stat) - TICKS ))
kill -USR1 $SUT; kill -USR2 $SUT               # event-loop delay of the profiled window; the profile is written
for _ in $(seq 1 50); do [ -s "$OUT/steady.cpuprofile" ] && break; sleep 0.1; done; sleep 0.5
grep 'event-loop delay' "$OUT/sut.err" || true
[ "$MODE" = open ] && echo "CPU µs/request at 1,000 req/s (profiler on): $(( TICKS * 10000 / (SECS * 1000) ))"
node "$KIT/tools/profile-summary.mjs" "$OUT/steady.cpuprofile" "${TOP:-30}" | tee "$OUT/summary.txt"
echo "results: $OUT"
