/** A supertest request whose body is collected as raw bytes (`res.body` a Buffer), whatever its media type. */
import type request from 'supertest';

export function binary<T extends request.Test>(req: T): T {
  return req.buffer(true).parse((response, callback) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => callback(null, Buffer.concat(chunks)));
  });
}
