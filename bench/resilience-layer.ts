/**
 * The retry layer's own CPU per call, in process and without HTTP (so the machine's load matters less than in
 * bench/resilience.ts): `generate` of a model that answers at once, called directly and through a two-deployment
 * `deployedModel` (memory breakers, weighted strategy, 10 s budget), interleaved, CPU from process.cpuUsage(); then
 * the same for a native passthrough (`forward` and reading its one-piece body), the perf kit's path.
 *
 *   npx tsx bench/resilience-layer.ts      # BENCH_CALLS (default 200000), BENCH_ROUNDS (default 5)
 */
import type { ChatModel, ChatResult, PassthroughResponse } from '../server/core/chat.js';
import { createMemoryBreakers } from '../server/providers/resilience/circuit-breaker.js';
import { deployedModel } from '../server/providers/resilience/deployed-model.js';
import { createDeploymentStats } from '../server/providers/resilience/select-deployments.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const result: ChatResult = { content: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
const piece = new Uint8Array(600);
const direct: ChatModel = {
  provider: 'p',
  modelId: 'm',
  generate: async () => result,
  stream: async function* () {},
  countTokens: async () => 0,
  passthrough: {
    'openai-chat': {
      forward: async (): Promise<PassthroughResponse> => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: (async function* () {
          yield piece;
        })(),
      }),
    },
  },
};
const target = (id: string, weight: number) => ({ id, provider: id, weight, upstreamModel: 'm', model: () => direct });
const layered = deployedModel(
  'chat',
  {
    modelId: 'bench',
    deployments: [target('a', 3), target('b', 1)],
    strategy: 'weighted',
    retries: 2,
    fallbacks: () => [],
    contextWindowFallbacks: () => [],
    budgetMs: 10_000,
    backoffMs: 100,
    maxBackoffMs: 5000,
  },
  { breakers: createMemoryBreakers({ failureThreshold: 5, cooldownMs: 30_000 }), stats: createDeploymentStats() },
);
const context = {
  signal: new AbortController().signal,
  requestId: 'r',
  warn: () => undefined,
  attempted: () => undefined,
};

const body = { model: 'm', messages: [] };

async function generate(model: ChatModel): Promise<void> {
  await model.generate({ messages: [] }, context);
}

async function forward(model: ChatModel): Promise<void> {
  const response = await model.passthrough!['openai-chat']!.forward(body, context);
  for await (const _ of response.body) {
    // read whole, as a JSON answer is
  }
}

async function run(model: ChatModel, call: (model: ChatModel) => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  for (let index = 0; index < CALLS; index += 1) {
    await call(model);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

async function measure(name: string, call: (model: ChatModel) => Promise<void>): Promise<void> {
  await run(direct, call);
  await run(layered, call);
  const rows: Array<[number, number]> = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const a = await run(direct, call);
    const b = await run(layered, call);
    rows.push([a, b]);
    process.stdout.write(
      `${name} round ${round + 1}: direct ${a.toFixed(2)} µs/call, through the layer ${b.toFixed(2)} µs/call\n`,
    );
  }
  const extra = rows.map(([a, b]) => b - a).sort((x, y) => x - y);
  process.stdout.write(
    `${name}: median extra CPU of the layer: ${extra[Math.floor(extra.length / 2)]!.toFixed(2)} µs/call\n`,
  );
}

async function main(): Promise<void> {
  await measure('generate', generate);
  await measure('passthrough', forward);
}

void main();
