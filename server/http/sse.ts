/**
 * Server-sent events framing, and nothing else: codecs produce `{event?, data}` objects, this writes them.
 * Payloads are never inspected. Multi-line data is split into several `data:` lines per the SSE spec, and
 * an event name containing CR or LF is refused (it would let a payload inject frames).
 */
import type { Response } from 'express';

import type { WireEvent } from '../core/wire-event.js';
import { observers } from '../observability/hooks.js';

/** What `send` writes: a codec's event. */
export type SseEvent = WireEvent;

export interface SseWriter {
  send(event: SseEvent): void;
  /** Writes a raw `data:` line such as `[DONE]`. */
  sendRaw(data: string): void;
  end(): void;
  readonly open: boolean;
}

export function frame(event: string | undefined, data: string): string {
  if (event !== undefined && /[\r\n]/.test(event)) {
    throw new Error('SSE event names must not contain CR or LF');
  }
  // Nearly every event's data is one line of JSON: framed without splitting (this runs once per token).
  const lines = /[\r\n]/.test(data)
    ? data
        .split(/\r\n|\r|\n/)
        .map((line) => `data: ${line}\n`)
        .join('')
    : `data: ${data}\n`;
  return `${event === undefined ? '' : `event: ${event}\n`}${lines}\n`;
}

export function openSse(res: Response): SseWriter {
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('connection', 'keep-alive');
  res.setHeader('x-accel-buffering', 'no');
  observers.metrics?.streamOpened?.(res);
  const writable = () => !res.writableEnded && !res.destroyed;
  // The headers go out with the first event when it is already here (an upstream's headers and first chunk
  // usually arrive together): one write to the socket instead of two. When it is not, they go out at the end of
  // this turn of the event loop, so a caller waiting for a slow first token still sees the stream open at once.
  setImmediate(() => {
    if (!res.headersSent && writable()) {
      res.flushHeaders();
    }
  });
  return {
    send({ event, data }) {
      if (writable()) {
        res.write(frame(event, typeof data === 'string' ? data : JSON.stringify(data)));
      }
    },
    sendRaw(data) {
      if (writable()) {
        res.write(frame(undefined, data));
      }
    },
    end() {
      if (writable()) {
        res.end();
      }
    },
    get open() {
      return writable();
    },
  };
}
