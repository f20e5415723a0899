/**
 * Server-sent events from a response body, parsed by eventsource-parser (never by splitting on `data: `).
 * UTF-8 sequences and frames split across network chunks are reassembled by `TextDecoderStream` and the
 * parser. Breaking out of the loop cancels the body, which closes the connection.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';

export interface SseEvent {
  /** The `event:` field; absent for unnamed events (chat completions). */
  event?: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

export async function* parseSse(stream: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent, void, undefined> {
  // TS's DOM lib types TextDecoderStream's input as BufferSource, which excludes views that might sit on a
  // SharedArrayBuffer; response bodies never do.
  const decoder = new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>;
  const reader = stream.pipeThrough(decoder).pipeThrough(new EventSourceParserStream()).getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value.event === undefined ? { data: value.data } : { event: value.event, data: value.data };
    }
  } finally {
    if (!finished) {
      // The consumer stopped early or reading failed: release the connection instead of leaving it open.
      await reader.cancel().catch(() => undefined);
    }
    reader.releaseLock();
  }
}
