/**
 * Holds a response's head until its first body byte. The MCP SDK's Node adapter writes a stream's head as soon
 * as the stream opens, before any tool has run; held back, the head still takes the headers a tool call sets
 * while it runs (`x-omnigate-deployment`, `x-omnigate-attempts`, the key's `x-ratelimit-*`: call scopes set
 * headers only while `headersSent` is false, which it stays until the head is written). The head goes out
 * with the first `write` or `end`, so what is set after that first byte (a later call of a JSON-RPC batch)
 * is not sent.
 *
 * The wrappers are own properties of this one response (they give it a hidden class of its own, which only
 * the MCP route pays) and are put back at the first byte: a write without a head writes it through
 * `writeHead`, which must then be the real one.
 */
import type { ServerResponse } from 'node:http';

export function holdHeadUntilBody(res: ServerResponse): void {
  const { writeHead, write, end } = res;
  let held: unknown[] | undefined;
  const release = () => {
    res.writeHead = writeHead;
    res.write = write;
    res.end = end;
    if (held) {
      (writeHead as (...args: unknown[]) => ServerResponse).apply(res, held);
      held = undefined;
    }
  };
  res.writeHead = ((...args: unknown[]) => {
    held = args;
    return res;
  }) as ServerResponse['writeHead'];
  res.write = ((...args: unknown[]) => {
    release();
    return (write as (...args: unknown[]) => boolean).apply(res, args);
  }) as ServerResponse['write'];
  res.end = ((...args: unknown[]) => {
    release();
    return (end as (...args: unknown[]) => ServerResponse).apply(res, args);
  }) as ServerResponse['end'];
}
