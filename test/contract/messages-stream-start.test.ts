/**
 * A translated Anthropic stream (Messages in, an OpenAI-compatible upstream behind) needs an input-token count for
 * `message_start` before any token exists. It counts while the upstream call starts, not before it: with the
 * tokenizer thread busy, the upstream still gets the call at once, and `message_start` still carries the count.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { sseHead } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { closeSharedEncoder, sharedEncoder } from '../../server/tokens/encoder-client.js';
import { createTestApp } from '../helpers/create-test-app.js';
import { readSse } from '../helpers/read-sse.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function chunk(delta: object, finish: string | null): string {
  return `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/** Random CJK without punctuation: about the slowest text to count (README: ~1 s of CPU per 512 Ki chars). */
function randomCjk(length: number): string {
  const units = randomBytes(length * 2);
  for (let i = 0; i < length; i += 1) {
    units.writeUInt16LE(0x4e00 + (units.readUInt16LE(i * 2) % 0x5000), i * 2);
  }
  return units.toString('utf16le');
}

it('asks the upstream before the input count is ready, and still puts the count in message_start', async () => {
  let busyCountDone = false;
  let busyWhenAsked: boolean | undefined;
  const upstream: FakeUpstream = await startFakeUpstream((_request, res) => {
    busyWhenAsked = !busyCountDone;
    sseHead(res);
    res.end(
      `${chunk({ role: 'assistant', content: '' }, null) + chunk({ content: 'Hi.' }, null) + chunk({}, 'stop')}data: [DONE]\n\n`,
    );
  });
  closers.push(() => upstream.close());
  const testApp = await createTestApp({
    providers: [
      {
        id: 'fake',
        type: 'openai-compatible',
        base_url: `${upstream.origin}/v1`,
        timeout_ms: 5000,
        max_connections: 4,
        headers: {},
        responses: 'translate',
      },
    ],
  });
  const server = testApp.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  // The next count starts a fresh tokenizer thread, which loads its ranks before it answers; then a long count
  // (about 0.1 s of the thread's CPU, several times the call's way to the upstream) holds it, and the call's own count waits behind both. Order, not time: counted
  // before the upstream call, the call would reach the upstream only after the long count was done.
  await closeSharedEncoder();
  const text = randomCjk(50_000);
  const busyCount = sharedEncoder()
    .count({ texts: [text], budgetChars: text.length }, () => ({
      countedTokens: 0,
      countedChars: 0,
      estimatedChars: text.length,
    }))
    .finally(() => (busyCountDone = true));

  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/anthropic/v1/messages`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${testApp.key}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      model: 'fake:m',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'Say hi.' }],
    }),
  });
  const events = readSse(await response.text());
  expect((await busyCount).countedChars).toBe(text.length);

  expect(response.status).toBe(200);
  const start = JSON.parse(events.find((event) => event.event === 'message_start')!.data) as {
    message: { usage: { input_tokens: number } };
  };
  expect(start.message.usage.input_tokens).toBeGreaterThan(0);
  expect(events.at(-1)?.event).toBe('message_stop');
  expect(busyWhenAsked).toBe(true);
});
