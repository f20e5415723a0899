import { describe, expect, it } from 'vitest';
import { readEvents, sseDecoder, type UpstreamSseEvent } from './read-sse.js';

const STREAM = [
  ': keep-alive comment',
  '',
  'event: delta',
  'data: {"text":"18°C ☀️ — Zürich"}',
  '',
  'data: line one',
  'data: line two',
  '',
  'data: [DONE]',
  '',
  'data: {"last":"without its blank line"}',
].join('\r\n');

const EXPECTED: UpstreamSseEvent[] = [
  { event: 'delta', data: '{"text":"18°C ☀️ — Zürich"}' },
  { data: 'line one\nline two' },
  { data: '[DONE]' },
  { data: '{"last":"without its blank line"}' },
];

function pieces(text: string, size: number): Uint8Array[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    out.push(bytes.subarray(at, at + size));
  }
  return out;
}

describe('sseDecoder', () => {
  it.each([1, 2, 3, 5, 64, 4096])(
    'gives the same events when the bytes arrive in %i-byte pieces (split characters too)',
    (size) => {
      const decoder = sseDecoder();
      const events = pieces(STREAM, size).flatMap((piece) => decoder.push(piece));
      expect([...events, ...decoder.end()]).toEqual(EXPECTED);
    },
  );

  it('hands each event out once, as soon as its blank line arrives', () => {
    const decoder = sseDecoder();
    expect(decoder.push(Buffer.from('data: a\n'))).toEqual([]);
    expect(decoder.push(Buffer.from('\ndata: b\n\ndata: c'))).toEqual([{ data: 'a' }, { data: 'b' }]);
    expect(decoder.push(Buffer.from(''))).toEqual([]);
    expect(decoder.end()).toEqual([{ data: 'c' }]);
  });
});

describe('readEvents', () => {
  async function* body(text: string, size: number): AsyncGenerator<Uint8Array> {
    yield* pieces(text, size);
  }

  it.each([1, 7, 4096])('reads the same events from %i-byte pieces', async (size) => {
    const events: UpstreamSseEvent[] = [];
    for await (const event of readEvents(body(STREAM, size), undefined, (event) => event)) {
      events.push(event);
    }
    expect(events).toEqual(EXPECTED);
  });

  it('skips the events its conversion turns into undefined', async () => {
    const data: string[] = [];
    for await (const text of readEvents(body(STREAM, 5), undefined, (event) =>
      event.event === 'delta' ? undefined : event.data,
    )) {
      data.push(text);
    }
    expect(data).toEqual(['line one\nline two', '[DONE]', '{"last":"without its blank line"}']);
  });

  it('stops at endAt, and drains the rest of the body instead of leaving it unread', async () => {
    let drained = false;
    async function* rest(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('data: 1\n\ndata: [DONE]\n\n');
      yield Buffer.from('data: after\n\n');
      drained = true;
    }
    const events: UpstreamSseEvent[] = [];
    for await (const event of readEvents(rest(), '[DONE]', (event) => event)) {
      events.push(event);
    }
    expect(events).toEqual([{ data: '1' }]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(true);
  });
});
