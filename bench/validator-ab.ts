/**
 * The request validator alone, the contract as written against the validator's copy
 * (server/spec/validator-document.ts): CPU ms of one `validate()` of each body kind, median of `RUNS` (default 5),
 * both compiled the way express-openapi-validator compiles them (test/helpers/body-validator.ts). No HTTP, no
 * JSON.parse: what Ajv itself holds the event loop for.
 * `npx tsx bench/validator-ab.ts [name filter]`
 */
import { loadSpec } from '../server/spec/load-spec.js';
import { validatorDocument } from '../server/spec/validator-document.js';
import { bodyValidator, jsonBodySchemas } from '../test/helpers/body-validator.js';

const only = process.argv[2];
const runs = Number(process.env.RUNS ?? 5);
const contract = loadSpec().document;
const copy = validatorDocument(contract);
const before = jsonBodySchemas(contract);
const after = jsonBodySchemas(copy.document);

const MiB24 = 24 * 1024 * 1024;
const user = { role: 'user', content: 'hi' };
const textParts = (count: number, type = 'text') => Array.from({ length: count }, () => ({ type, text: 'x' }));
// The shapes of bench/body-hold.ts's budget bodies (just under the JSON token budget).
const cases: Array<[string, string, () => unknown]> = [
  [
    'chat messages 10,000',
    'POST /v1/chat/completions',
    () => ({ model: 'local:chat', messages: Array(10_000).fill(user) }),
  ],
  [
    'chat content parts 39 × 1,000',
    'POST /v1/chat/completions',
    () => ({
      model: 'local:chat',
      messages: Array.from({ length: 39 }, () => ({ role: 'user', content: textParts(1000) })),
    }),
  ],
  [
    'Anthropic blocks 39 × 1,000',
    'POST /anthropic/v1/messages',
    () => ({
      model: 'local:chat',
      max_tokens: 8,
      messages: Array.from({ length: 39 }, () => ({ role: 'user', content: textParts(1000) })),
    }),
  ],
  [
    'Responses parts 39 × 1,000',
    'POST /v1/responses',
    () => ({
      model: 'local:chat',
      input: Array.from({ length: 39 }, () => ({ role: 'user', content: textParts(1000, 'input_text') })),
    }),
  ],
  [
    'Anthropic 512 tools, wide schemas',
    'POST /anthropic/v1/messages',
    () => ({
      model: 'local:chat',
      max_tokens: 8,
      messages: [user],
      tools: Array.from({ length: 512 }, () => ({
        name: 'f',
        input_schema: {
          type: 'object',
          properties: Object.fromEntries(Array.from({ length: 75 }, (_, i) => [`p${i}`, { type: 'string' }])),
        },
      })),
    }),
  ],
  ['24 MiB audio_base64 (accepted)', 'POST /v1/tools/transcribe_audio', () => ({ audio_base64: 'A'.repeat(MiB24) })],
  [
    '24 MiB model (accepted, minLength 1)',
    'POST /v1/tools/image_understanding',
    () => ({ prompt: 'x', image_url: 'https://example.com/a.png', model: 'm'.repeat(MiB24) }),
  ],
  [
    '24 MiB image data URL (accepted)',
    'POST /v1/tools/image_understanding',
    () => ({ prompt: 'x', image_url: `data:image/png;base64,${'A'.repeat(MiB24)}` }),
  ],
  [
    '24 MiB chat model (refused, maxLength 256)',
    'POST /v1/chat/completions',
    () => ({ model: 'm'.repeat(MiB24), messages: [user] }),
  ],
];

function cpuMs(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

console.log('| body | contract as written: CPU ms | validator copy: CPU ms | verdict |');
console.log('|---|---|---|---|');
for (const [name, operation, make] of cases) {
  if (only && !name.includes(only)) {
    continue;
  }
  const body = make();
  const validators = [
    bodyValidator(contract, before.get(operation)),
    bodyValidator(copy.document, after.get(operation), copy.formats),
  ];
  const verdicts = validators.map((validate) => validate({ body })); // also compiles and warms
  if (verdicts[0] !== verdicts[1]) {
    throw new Error(`${name}: the contract says ${verdicts[0]}, the copy ${verdicts[1]}`);
  }
  const times = validators.map((validate) =>
    median(Array.from({ length: runs }, () => cpuMs(() => validate({ body })))),
  );
  console.log(`| ${name} | ${times[0].toFixed(2)} | ${times[1].toFixed(2)} | ${verdicts[0] ? 'valid' : 'invalid'} |`);
}
