/**
 * Writing a fake upstream's answer the way a real server does: headers, then the body in separate writes
 * (boundaries anywhere, inside UTF-8 characters and SSE lines too), so readers are tested on awkward pieces.
 * The Anthropic helpers add the headers Anthropic sends; OpenAI-compatible answers use the generic ones.
 */
import type { ServerResponse } from 'node:http';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** Writes each piece in its own write and yields to the event loop between them, so they arrive apart. */
export async function writePieces(res: ServerResponse, pieces: Iterable<string | Uint8Array>): Promise<void> {
  for (const piece of pieces) {
    res.write(piece);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Writes `text` in `size`-byte pieces (does not end the response). */
export async function writeInPieces(res: ServerResponse, text: string, size = 7): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    pieces.push(bytes.subarray(at, at + size));
  }
  await writePieces(res, pieces);
}

/** A 200 event-stream head; the test writes the events. */
export function sseHead(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { ...SSE_HEADERS, ...headers });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/** An Anthropic JSON answer, with the `request-id` header Anthropic puts on every response. */
export function sendAnthropicJson(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, text, { 'request-id': 'req_fake_1', ...headers });
}

/** An Anthropic event stream, `text` written in `pieceBytes`-byte pieces (0: in one write), then ended. */
export async function sendAnthropicSse(res: ServerResponse, text: string, pieceBytes = 0): Promise<void> {
  sseHead(res, { 'request-id': 'req_fake_2', 'anthropic-ratelimit-requests-remaining': '49' });
  await writeInPieces(res, text, pieceBytes > 0 ? pieceBytes : Math.max(1, Buffer.byteLength(text)));
  res.end();
}

/** A binary answer (images and audio an upstream serves), written in two pieces. */
export async function sendBytes(
  res: ServerResponse,
  bytes: Uint8Array,
  contentType: string,
  status = 200,
): Promise<void> {
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(bytes.length) });
  const half = Math.floor(bytes.length / 2);
  await writePieces(res, [bytes.subarray(0, half), bytes.subarray(half)]);
  res.end();
}

export function sendRedirect(res: ServerResponse, location: string, status = 302): void {
  res.writeHead(status, { location }).end();
}
