// One-time helper: merges openapi/fragments/*.yaml into one document.
// Usage: node openapi/fragments/assemble.mjs OUT.yaml [fragment-name-substring ...]
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { parse, stringify } from 'yaml';
const dir = new URL('.', import.meta.url).pathname;
const [out, ...only] = process.argv.slice(2);
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()
  .filter((f) => f.startsWith('00-') || only.length === 0 || only.some((o) => f.includes(o)));
const root = parse(readFileSync(dir + files[0], 'utf8'));
for (const f of files.slice(1)) {
  const doc = parse(readFileSync(dir + f, 'utf8'));
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    if (root.paths[p]) throw new Error(`${f}: path ${p} defined twice`);
    root.paths[p] = item;
  }
  for (const [kind, map] of Object.entries(doc.components ?? {})) {
    root.components[kind] ??= {};
    for (const [name, value] of Object.entries(map)) {
      if (root.components[kind][name]) throw new Error(`${f}: components.${kind}.${name} defined twice`);
      root.components[kind][name] = value;
    }
  }
}
writeFileSync(out, stringify(root, { lineWidth: 0, aliasDuplicateObjects: false }));
console.log(`wrote ${out} from ${files.join(', ')}`);
