/**
 * Against the real process (`dist/main.js`; in the test runner's own process the race does not show):
 * answers given before the body is read (a wrong key's 401, a file over the limit's 413, a JSON body declared over
 * the limit, answered before any of it is sent) reach the official OpenAI SDK as those statuses with their envelope
 * and request id, not as "Connection error.": the server reads and discards up to EARLY_ANSWER_DRAIN_BYTES of
 * the body after answering, and closes the connection only when the body goes past that bound (a raw socket shows the answer arrives before the close).
 */
import { connect } from 'node:net';
import OpenAI, { APIConnectionError, APIError, toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARLY_ANSWER_DRAIN_BYTES } from '../../server/http/drain-early-answer.js';
import { dataDir, killServers, startServer, type Started } from '../helpers/spawn-server.js';

const KEY = 'og-early-answer-test-key-0123456789';
const MB = 1024 * 1024;
let server: Started;
beforeAll(async () => {
  server = await startServer({
    OMNIGATE_DATA_DIR: dataDir(),
    OMNIGATE_API_KEYS: KEY,
    OMNIGATE_MAX_FILE_BYTES: String(64 * 1024),
  });
}, 120_000);
afterAll(() => killServers());

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `http://127.0.0.1:${server.port}/v1`, maxRetries: 0 });
const wrongKeyClient = () => client('og-wrong-key-for-the-early-answer-test');

/** The SDK's error from `call`: an APIError with the status, never an APIConnectionError. */
async function failure(call: () => Promise<unknown>): Promise<APIError> {
  const error = await call().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).not.toBeInstanceOf(APIConnectionError);
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

describe('an answer before the body is read', () => {
  it('files.create of 12 MB with a wrong key: 401 Invalid API key with its envelope and request id', async () => {
    const error = await failure(async () =>
      wrongKeyClient().files.create({
        file: await toFile(Buffer.alloc(12 * MB, 7), 'notes.txt'),
        purpose: 'assistants',
      }),
    );
    expect(error.status).toBe(401);
    expect(error.error).toMatchObject({
      message: 'Invalid API key.',
      type: 'authentication_error',
      code: 'invalid_api_key',
    });
    expect(error.requestID).toMatch(/^req_/);
  });

  it('multipart videos.create with a 12 MB reference image and a wrong key: 401', async () => {
    const error = await failure(async () =>
      wrongKeyClient().videos.create({
        model: 'local:video' as never,
        prompt: 'a lighthouse',
        input_reference: await toFile(Buffer.alloc(12 * MB, 1), 'frame.png', { type: 'image/png' }),
      }),
    );
    expect(error.status).toBe(401);
    expect((error.error as { code?: string }).code).toBe('invalid_api_key');
  });

  it('files.create over the size limit with the right key: 413 with its envelope', async () => {
    const error = await failure(async () =>
      client(KEY).files.create({ file: await toFile(Buffer.alloc(12 * MB, 7), 'big.txt'), purpose: 'assistants' }),
    );
    expect(error.status).toBe(413);
    expect((error.error as { code?: string }).code).toBe('file_too_large');
    expect(error.requestID).toMatch(/^req_/);
  });

  it('keeps the connection for the next request when the discarded body ends within the bound', async () => {
    const { received } = await rawExchange(
      `POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n${'x'.repeat(1000)}` +
        `GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(received).toMatch(/^HTTP\/1\.1 401 /);
    expect(received).toMatch(/HTTP\/1\.1 200 OK[\s\S]*"status"/);
  });

  it('answers, then closes the connection once the body goes past the bound', async () => {
    // Well past what the kernel buffers of both ends hold, so a server still reading would take it all.
    const total = EARLY_ANSWER_DRAIN_BYTES + 48 * MB;
    const { received, acceptedBytes } = await rawExchange(
      `POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${total}\r\n\r\n`,
      total,
    );
    expect(received).toMatch(/^HTTP\/1\.1 401 /);
    expect(received, received).toContain('"missing_api_key"');
    // The server stopped reading: not the whole body went through before the close.
    expect(acceptedBytes).toBeLessThan(total);
  });

  it('answers a JSON body declared over the limit before any of it is sent, then closes past the bound', async () => {
    const total = EARLY_ANSWER_DRAIN_BYTES + 48 * MB;
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`;
    // Nothing of the body is written until the answer is there: a server that read the body first never answers.
    const answered = await rawExchange(head, total, /^HTTP\/1\.1 413 [\s\S]*"request_too_large"/);
    expect(answered.acceptedBytes).toBe(0);
    const { received, acceptedBytes } = await rawExchange(head, total);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(acceptedBytes).toBeLessThan(total);
  });

  it('closes an upload refused for its size once the rest of it goes past the bound', async () => {
    const bytes = EARLY_ANSWER_DRAIN_BYTES + 48 * MB;
    const parts =
      '--XyZ\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n' +
      '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n';
    const { acceptedBytes } = await rawExchange(
      `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nConnection: close\r\n` +
        `Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: ${Buffer.byteLength(parts) + bytes}\r\n\r\n${parts}`,
      bytes,
    );
    // Past the 64 KiB file limit the server reads on only to the bound, not the whole body.
    expect(acceptedBytes).toBeLessThan(bytes);
  });
});

/**
 * Writes `head` on a raw socket, then (if `bodyBytes`) that many bytes as the socket takes them,
 * stopping at the server's close; resolves with what came back and how many body bytes were written.
 * With `answerFirst`, no body byte is written until what came back matches it, and it resolves then.
 */
function rawExchange(
  head: string,
  bodyBytes = 0,
  answerFirst?: RegExp,
): Promise<{ received: string; acceptedBytes: number }> {
  return new Promise((resolve, reject) => {
    let received = '';
    let acceptedBytes = 0;
    let closed = false;
    const piece = Buffer.alloc(64 * 1024, 120);
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(head);
      // One piece per turn of the event loop, reading what arrives in between, as an HTTP client does.
      const pump = () => {
        if (answerFirst) {
          return;
        }
        if (closed || acceptedBytes >= bodyBytes) {
          return;
        }
        const chunk = piece.subarray(0, Math.min(piece.length, bodyBytes - acceptedBytes));
        acceptedBytes += chunk.length;
        if (socket.write(chunk)) {
          setImmediate(pump);
        } else {
          socket.once('drain', pump);
        }
      };
      pump();
    });
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      received += text;
      if (answerFirst?.test(received)) {
        socket.destroy();
      }
    });
    socket.on('error', () => undefined); // a reset after the answer is the expected end past the bound
    socket.on('close', () => {
      closed = true;
      resolve({ received, acceptedBytes });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection stayed open; received: ${received.slice(0, 200)}`));
    }, 60_000).unref();
  });
}
