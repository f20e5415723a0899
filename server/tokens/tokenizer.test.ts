/**
 * The tokenizer counts normal text exactly as the raw o200k encoder does, and any text (long runs of one
 * character, CJK without spaces, base64, megabytes of it) in bounded time without holding the event loop:
 * BPE is quadratic in a pre-token's length, so a 100,000-char run once froze the gateway for seconds.
 */
import { randomBytes } from 'node:crypto';
import { countTokens as rawCount, encode as rawEncode, decode as rawDecode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import type { ChatCallOptions } from '../core/chat.js';
import { EXACT_COUNT_BUDGET_CHARS } from './token-counter.js';
import { measureLoopHold } from '../../test/helpers/cpu-time.js';
import { countCallInputTokens, countTextTokens, splitIntoTokens } from './tokenizer.js';

const MB = 1024 * 1024;
const plain = { disallowedSpecial: new Set<string>() };

const english =
  'The gateway counts tokens for every call. It should never freeze, whatever the caller sends!\n' +
  "  Indented lines, numbers like 1234567 and 3.14159, don't, we'll, URLs https://example.com/a/b?c=d.\n\n";
const code = 'function add(a, b) {\n    return a + b; // sum\n}\n\tconst xs = [1, 2, 3].map((x) => x * 2);\n';
const json = JSON.stringify({
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
});
const cjk = '你好，世界！今天的天气很好。我们去公园散步吧？日本語のテキストも、少し混ぜます。';

function randomCjk(length: number): string {
  const units = Buffer.alloc(length * 2);
  const noise = randomBytes(length * 2);
  for (let i = 0; i < length; i += 1) {
    units.writeUInt16LE(0x4e00 + (noise.readUInt16LE(i * 2) % 0x5000), i * 2);
  }
  return units.toString('utf16le');
}

/*
 * Blocking and boundedness are measured in CPU time (test/helpers/cpu-time.ts), so a busy machine cannot fail
 * them: `longestHoldMs` is this thread's CPU between two turns of the event loop (an encode on this thread
 * would hold it for the whole count: seconds for these texts), `cpuMs` the process's CPU for the count, encoder
 * thread included (quadratic BPE of a 1 MB run is minutes).
 */
const HOLD_LIMIT_MS = 50;
const COUNT_CPU_LIMIT_MS = 8000;

describe('countTextTokens', () => {
  it('is exact for normal text, long or short', async () => {
    for (const text of [
      '',
      'Hi',
      english,
      code,
      json,
      cjk,
      `${english}${code}${json}${cjk}`.repeat(300),
      'emoji 👍🏽 and ünïcödé',
      'a <|endoftext|> b',
    ]) {
      expect(await countTextTokens(text)).toBe(rawCount(text, plain));
    }
  });

  it('is exact where it cuts long text into pieces (mixes of words, spaces, line breaks, contractions, numbers, emoji)', async () => {
    const words = [
      'hello',
      ' world',
      '  ',
      '\n',
      '\n\n',
      '\t',
      'ÉTÉ',
      "don't",
      " we'll",
      ' 12345',
      '!!',
      '...',
      '{"a":',
      '}',
      ' 中文',
      '字',
      '👍',
      ' ',
      'CamelCase',
      'UPPER',
      '/',
      '\r\n',
      '   x',
      '//',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 200; trial += 1) {
      let text = '';
      while (text.length < 4000) {
        text += words[Math.floor(next() * words.length)];
      }
      expect(await countTextTokens(text)).toBe(rawCount(text, plain));
    }
  });

  it('counts special-token text as plain text instead of throwing', async () => {
    expect(await countTextTokens('<|endoftext|><|im_start|>')).toBeGreaterThan(2);
  });

  it('extrapolates beyond its exact budget, close to the exact count', async () => {
    const text = english.repeat(Math.ceil((3 * EXACT_COUNT_BUDGET_CHARS) / english.length));
    const exact = rawCount(text, plain);
    const estimate = await countTextTokens(text);
    expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.01);
  });

  const adversarial: Record<string, (length: number) => string> = {
    'one letter': (length) => 'A'.repeat(length),
    spaces: (length) => ' '.repeat(length),
    punctuation: (length) => '!'.repeat(length),
    'one CJK character': (length) => '中'.repeat(length),
    'random CJK': (length) => randomCjk(length),
    base64: (length) =>
      randomBytes(Math.ceil((length * 3) / 4))
        .toString('base64')
        .slice(0, length),
  };
  for (const [name, make] of Object.entries(adversarial)) {
    it(`counts 1 MB and 5 MB of ${name} in bounded time without holding the event loop`, async () => {
      for (const length of [MB, 5 * MB]) {
        // Flat, as a request's strings are (JSON.parse makes them): `repeat` builds a rope, and the count's first
        // slice flattened its 10 MB inside the measured hold (~50 ms for 5 MB of one CJK character).
        const text = JSON.parse(JSON.stringify(make(length))) as string;
        const { result, longestHoldMs, cpuMs } = await measureLoopHold(() => countTextTokens(text));
        expect(result).toBeGreaterThan(0);
        expect(longestHoldMs).toBeLessThan(HOLD_LIMIT_MS);
        expect(cpuMs).toBeLessThan(COUNT_CPU_LIMIT_MS);
      }
    });
  }
});

describe('countCallInputTokens', () => {
  function nestedSchema(depth: number): Record<string, unknown> {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < depth; i += 1) {
      schema = { type: 'object', properties: { a: schema } };
    }
    return schema;
  }
  const call = (parameters: Record<string, unknown>): ChatCallOptions => ({
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    tools: [{ name: 'deep', description: 'A deep schema', parameters }],
  });

  it('counts tool schemas nested 10,000 levels deep without a stack overflow', async () => {
    const shallow = await countCallInputTokens(call(nestedSchema(2_000)));
    const deep = await countCallInputTokens(call(nestedSchema(10_000)));
    expect(deep).toBeGreaterThan(4 * shallow);
  });

  it('counts a tool schema as its JSON text', async () => {
    const parameters = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`field_${i}`, nestedSchema(5)])),
    };
    const withTool = await countCallInputTokens(call(parameters));
    const withoutTool = await countCallInputTokens({ messages: call(parameters).messages });
    expect(withTool - withoutTool).toBe(
      rawCount(JSON.stringify({ name: 'deep', description: 'A deep schema', parameters }), plain),
    );
  });

  it('counts many large messages under one budget without holding the event loop', async () => {
    const messages = Array.from({ length: 20 }, () => ({
      role: 'user' as const,
      content: [{ type: 'text' as const, text: 'A'.repeat(MB / 4) }],
    }));
    const { result, longestHoldMs, cpuMs } = await measureLoopHold(() => countCallInputTokens({ messages }));
    expect(result).toBeGreaterThan(20 * 3);
    expect(longestHoldMs).toBeLessThan(HOLD_LIMIT_MS);
    expect(cpuMs).toBeLessThan(COUNT_CPU_LIMIT_MS);
  });
});

describe('splitIntoTokens', () => {
  it('gives the raw encoder tokens of normal text', async () => {
    const text = `${english}${code}${cjk}`.repeat(20);
    expect(await splitIntoTokens(text)).toEqual(rawEncode(text).map((token) => rawDecode([token])));
  });

  it('splits a long run of one character quickly, into pieces that join to the text', async () => {
    const text = 'A'.repeat(200_000);
    const { result, longestHoldMs } = await measureLoopHold(() => splitIntoTokens(text));
    expect(result.join('')).toBe(text);
    expect(longestHoldMs).toBeLessThan(HOLD_LIMIT_MS);
  });
});
