/**
 * Native passthrough over an upstream client: the caller's body goes to `path` untouched, with the caller's
 * query and allowed headers; a non-2xx answer is thrown by the client as a mapped `UpstreamError`.
 */
import type { NativePassthrough, PassthroughResponse } from '../../core/chat.js';
import type { UpstreamHttpClient } from './http-client.js';

export async function forwardBody(
  client: UpstreamHttpClient,
  path: string,
  body: Record<string, unknown>,
  context: Parameters<NativePassthrough['forward']>[1],
): Promise<PassthroughResponse> {
  const response = await client.post({
    path,
    body,
    signal: context.signal,
    accept: body.stream === true ? 'text/event-stream' : 'application/json',
    query: context.query,
    headers: context.headers,
  });
  return { status: response.status, headers: response.headers, body: response.body };
}
