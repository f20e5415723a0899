import { describe, expect, it, vi } from 'vitest';
import { parseSse, type SseEvent } from './sse.js';

const encoder = new TextEncoder();

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index < chunks.length) {
        controller.enqueue(chunks[index++]);
      } else {
        controller.close();
      }
    },
  });
}

/** Cuts `bytes` at the given offsets. */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const bounds = [0, ...offsets, bytes.length];
  return bounds.slice(1).map((end, i) => bytes.slice(bounds[i], end));
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of parseSse(stream)) {
    events.push(event);
  }
  return events;
}

// Multi-byte UTF-8 (é: 2 bytes, 雨: 3 bytes, 🌧: 4 bytes), CRLF and LF line ends, a comment, a named event,
// multi-line data and the chat `[DONE]` terminator: everything a split can break.
const WIRE =
  ': keep-alive\n\n' +
  'data: {"text":"Café 雨 🌧"}\r\n\r\n' +
  'event: response.output_text.delta\n' +
  'data: {"delta":"a"}\n\n' +
  'data: line one\n' +
  'data: line two\n\n' +
  'data: [DONE]\n\n';

const WANT: SseEvent[] = [
  { data: '{"text":"Café 雨 🌧"}' },
  { event: 'response.output_text.delta', data: '{"delta":"a"}' },
  { data: 'line one\nline two' },
  { data: '[DONE]' },
];

describe('parseSse', () => {
  const bytes = encoder.encode(WIRE);

  it('parses the wire in one chunk', async () => {
    expect(await collect(streamOf([bytes]))).toEqual(WANT);
  });

  it('parses the wire one byte per chunk', async () => {
    const oneByteChunks = Array.from(bytes, (byte) => Uint8Array.of(byte));
    expect(await collect(streamOf(oneByteChunks))).toEqual(WANT);
  });

  it('parses the wire split in two at every byte offset (inside UTF-8 sequences, between CR and LF)', async () => {
    for (let offset = 1; offset < bytes.length; offset++) {
      const events = await collect(streamOf(cut(bytes, [offset])));
      expect(events, `split at byte ${offset}`).toEqual(WANT);
    }
  });

  it('parses the wire cut at pseudo-random offsets', async () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 50; round++) {
      const offsets = [...new Set(Array.from({ length: 6 }, () => 1 + Math.floor(random() * (bytes.length - 1))))].sort(
        (a, b) => a - b,
      );
      expect(await collect(streamOf(cut(bytes, offsets))), `cuts ${offsets.join(',')}`).toEqual(WANT);
    }
  });

  it('drops a trailing event that was never terminated by a blank line', async () => {
    const events = await collect(streamOf([encoder.encode('data: complete\n\ndata: cut off')]));
    expect(events).toEqual([{ data: 'complete' }]);
  });

  it('cancels the source stream when the consumer stops early', async () => {
    let cancelled = false;
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode(`data: ${++sent}\n\n`));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of parseSse(endless)) {
      expect(event).toEqual({ data: '1' });
      break;
    }
    // The cancel travels back through the two pipes asynchronously.
    await vi.waitFor(() => expect(cancelled).toBe(true), { timeout: 1000, interval: 5 });
  });
});
