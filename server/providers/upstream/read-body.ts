/**
 * Reading an upstream answer whole: the bytes (relayed as they are by passthrough), or its JSON, where
 * a body that is not JSON is the upstream's failure (502), not ours.
 */
import { UpstreamError } from '../../core/api-error.js';

export async function readAllBytes(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of body) {
    pieces.push(Buffer.from(piece));
  }
  return Buffer.concat(pieces);
}

/** `what` completes the failure message: `Upstream <provider> <what>`. */
export async function readJsonBody(
  provider: string,
  response: { status: number; body: AsyncIterable<Uint8Array> },
  what = 'answered with invalid JSON',
): Promise<unknown> {
  const text = (await readAllBytes(response.body)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UpstreamError(provider, 502, response.status, `Upstream ${provider} ${what}`, { cause: error });
  }
}
