/**
 * An answer given before the request's body was read (a wrong key's 401, a 413 on a declared length, a 404):
 * closing the connection at once, with the client still writing, makes the kernel reset it, and the client
 * loses the answer with it — the OpenAI SDK reports "Connection error." instead of "401 Invalid API key".
 * So the rest of the body is read and thrown away after the answer, and the connection stays usable for the
 * next request; only a body that goes on past EARLY_ANSWER_DRAIN_BYTES has its connection closed, by then long
 * after the answer went out. A body that stops arriving is cut off by the server's request timeout, as any
 * other.
 */
import type { IncomingMessage } from 'node:http';

/** How much of an unread body is read and discarded after an early answer before the connection is closed. */
export const EARLY_ANSWER_DRAIN_BYTES = 16 * 1024 * 1024;

/** Starts discarding what is left of `req`'s body; call it before writing the answer. */
export function drainUnreadBody(req: IncomingMessage, limit = EARLY_ANSWER_DRAIN_BYTES): void {
  if (req.complete || req.readableEnded || req.destroyed) {
    return;
  }
  // Whatever was reading the body (a parser that gave up on it) lets go of it first.
  req.unpipe();
  closePastBound(req, limit);
  // Consuming it here also keeps Node from closing the connection under a body it would have to skip.
  req.resume();
}

/**
 * Closes the connection once `limit` more bytes of `req`'s body have been read by whoever reads it: for a body
 * another reader discards (multer reads the whole rest of a refused upload before the answer).
 */
export function closePastBound(req: IncomingMessage, limit = EARLY_ANSWER_DRAIN_BYTES): void {
  let discarded = 0;
  const count = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limit) {
      req.off('data', count);
      req.socket.destroy();
    }
  };
  // A 'data' listener also sees the chunks a 'readable' reader takes with read().
  req.on('data', count);
}
