// The layering rule of server/ (ARCHITECTURE.md), checked: every import — type imports included — points at
// the same layer or a lower one, and no import circle exists. `npm test` runs it; so can anyone:
//   node scripts/check-layers.mjs
// Prints each violation and exits 1, or prints a one-line summary and exits 0.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const server = path.join(root, 'server');

/** Lowest first. A folder (or top-level file) may import from its own layer and the layers below it. */
const LAYERS = [
  ['core'],
  ['tokens', 'spec', 'engines', 'observability', 'config.ts', 'logger.ts'],
  ['formats'],
  ['storage'],
  ['providers'],
  ['usage', 'limits'],
  ['http', 'auth'],
  ['calls'],
  ['tools'],
  ['routes'],
  ['app.ts'],
  ['services.ts'],
  ['main.ts', 'readiness-checks.ts', 'welcome-message.ts', 'cli', 'cluster'],
];
const rank = new Map(LAYERS.flatMap((names, index) => names.map((name) => [name, index])));

function walk(directory) {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(directory, entry.name);
    return entry.isDirectory() ? walk(file) : [file];
  });
}

const sources = walk(server).filter((file) => /\.(ts|mts)$/.test(file) && !/\.test\.ts$/.test(file));
const problems = [];
const graph = new Map();

function layerOf(file) {
  const top = path.relative(server, file).split(path.sep)[0];
  if (!rank.has(top)) {
    problems.push(
      `${path.relative(root, file)}: '${top}' is in no layer; add it to LAYERS in scripts/check-layers.mjs`,
    );
    return undefined;
  }
  return rank.get(top);
}

for (const file of sources) {
  const text = fs.readFileSync(file, 'utf8');
  const targets = [];
  for (const match of text.matchAll(
    /(?:import|export)\s+(?:type\s+)?[^'";]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g,
  )) {
    const specifier = match[1] ?? match[2];
    const base = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '');
    const target = [`${base}.ts`, `${base}.mts`, path.join(base, 'index.ts')].find((candidate) =>
      sources.includes(candidate),
    );
    if (!target) {
      continue; // outside server/ (generated types, scripts) or not TypeScript
    }
    targets.push(target);
    const from = layerOf(file);
    const to = layerOf(target);
    if (from !== undefined && to !== undefined && to > from) {
      problems.push(
        `${path.relative(root, file)} imports ${path.relative(root, target)}: a higher layer (${LAYERS[to].join('/')} above ${LAYERS[from].join('/')})`,
      );
    }
  }
  graph.set(file, targets);
}

// Import circles: Tarjan's strongly connected components.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
function connect(node) {
  index.set(node, counter);
  low.set(node, counter);
  counter++;
  stack.push(node);
  onStack.add(node);
  for (const next of graph.get(node) ?? []) {
    if (!index.has(next)) {
      connect(next);
      low.set(node, Math.min(low.get(node), low.get(next)));
    } else if (onStack.has(next)) {
      low.set(node, Math.min(low.get(node), index.get(next)));
    }
  }
  if (low.get(node) === index.get(node)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) {
      problems.push(`import circle: ${component.map((file) => path.relative(root, file)).join(' → ')}`);
    }
  }
}
for (const node of graph.keys()) {
  if (!index.has(node)) {
    connect(node);
  }
}

const testOnly = walk(server).filter(
  (file) =>
    /\.(ts|mts|js|mjs)$/.test(file) &&
    !/\.test\./.test(file) &&
    /(^|\/)(__fixtures__\/|fake[-_]|mock[-_]|test[-_]meta)/.test(path.relative(server, file)),
);
for (const file of testOnly) {
  problems.push(`${path.relative(root, file)}: test-only code belongs under test/`);
}

if (problems.length > 0) {
  console.log(problems.join('\n'));
  process.exit(1);
}
console.log(
  `layers: ${sources.length} files in ${LAYERS.length} layers, every import points down or sideways, no circle, no test-only code`,
);
