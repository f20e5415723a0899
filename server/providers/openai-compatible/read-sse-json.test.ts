import { describe, expect, it } from 'vitest';
import { readSseJson } from './read-sse-json.js';

async function* bytesIn(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) {
    yield bytes.subarray(at, at + size);
  }
}

async function read(text: string, size: number): Promise<unknown[]> {
  const events: unknown[] = [];
  for await (const event of readSseJson(bytesIn(text, size), 'up')) {
    events.push(event);
  }
  return events;
}

const STREAM = [
  ': OPENROUTER PROCESSING',
  '',
  'data: {"choices":[{"index":0,"delta":{"content":"18°C ☀️ — Zürich"}}]}',
  '',
  'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
  '',
  'data: [DONE]',
  '',
  'data: {"ignored":"after done"}',
  '',
  '',
].join('\r\n');

describe('readSseJson', () => {
  it.each([1, 2, 3, 5, 7, 64, 4096])('parses the same events when the bytes arrive in %i-byte pieces', async (size) => {
    expect(await read(STREAM, size)).toEqual([
      { choices: [{ index: 0, delta: { content: '18°C ☀️ — Zürich' } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ]);
  });

  it('dispatches a last event that lacks its blank line', async () => {
    expect(await read('data: {"a":1}\n\ndata: {"b":2}', 3)).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('wraps the data of an `event: error` frame as an error object', async () => {
    expect(await read('event: error\ndata: {"message":"boom"}\n\n', 4)).toEqual([{ error: { message: 'boom' } }]);
  });

  it('throws an UpstreamError for data that is not JSON', async () => {
    await expect(read('data: {not json\n\n', 5)).rejects.toMatchObject({ status: 502, provider: 'up' });
  });
});

describe('readSseJson after [DONE]', () => {
  it('ends at [DONE] without waiting for the body to end, and drains the rest', async () => {
    let released: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      released = resolve;
    });
    let drained = false;
    async function* slowToClose(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('data: {"a":1}\n\ndata: [DONE]\n\n');
      await gate;
      yield Buffer.from('data: {"late":true}\n\n');
      drained = true;
    }
    const events: unknown[] = [];
    for await (const event of readSseJson(slowToClose(), 'up')) {
      events.push(event);
    }
    expect(events).toEqual([{ a: 1 }]);
    expect(drained).toBe(false);
    released();
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(true);
  });

  it('releases the body when the consumer stops early', async () => {
    let released = false;
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        yield Buffer.from('data: {"a":1}\n\n');
        yield Buffer.from('data: {"b":2}\n\n');
      } finally {
        released = true;
      }
    }
    for await (const event of readSseJson(body(), 'up')) {
      expect(event).toEqual({ a: 1 });
      break;
    }
    expect(released).toBe(true);
  });
});
