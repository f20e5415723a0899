/**
 * The real process (`server/main.ts`): start on port 0 with a temporary data directory, the first-start
 * key, keys from the environment, a bad configuration, and graceful shutdown on SIGTERM with a stream in
 * flight — finished within the grace period, or cut after it — with its usage record in the SQLite file.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../server/storage/database.js';
import { createResponseStore } from '../../server/storage/response-store.js';
import { sseHead } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { countTextTokens } from '../../server/tokens/tokenizer.js';
import { GENERATED_KEY_NOTICE } from '../../server/welcome-message.js';
import { readSse } from '../helpers/read-sse.js';
import { dataDir, environment, killServers, ROOT, spawnServer, startServer } from '../helpers/spawn-server.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const TEST_TIMEOUT_MS = 180_000;
const upstreams: FakeUpstream[] = [];

afterEach(async () => {
  killServers();
  await Promise.all(upstreams.splice(0).map((upstream) => upstream.close()));
});

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function call(
  port: number,
  method: string,
  urlPath: string,
  options: { key?: string; body?: unknown; agent?: Agent | false } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.key) {
      headers.authorization = `Bearer ${options.key}`;
    }
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
    }
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path: urlPath, headers, agent: options.agent ?? false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => {
          body += piece;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

function usageRows(dir: string): Array<Record<string, unknown>> {
  const db = new Database(path.join(dir, 'omnigate.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM usage_records ORDER BY seq').all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

/** A config file whose provider `slow` is the fake upstream. */
function slowProviderConfig(dir: string, upstream: FakeUpstream): string {
  const file = path.join(dir, 'omnigate.yaml');
  writeFileSync(
    file,
    `providers:\n  slow:\n    type: openai-compatible\n    base_url: ${upstream.origin}/v1\nmodels:\n  - provider: slow\n    model: drip\n`,
  );
  return file;
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1767225600, model: 'drip', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

const KEY_MESSAGE = GENERATED_KEY_NOTICE;

describe('starting', () => {
  it(
    'creates a key at first start, prints it once, and the key works across restarts',
    async () => {
      const dir = dataDir();
      const first = await startServer({ OMNIGATE_DATA_DIR: dir });
      const printed = first
        .stdout()
        .split('\n')
        .map((line) => line.trim());
      expect(printed).toContain(KEY_MESSAGE);
      const keys = printed.filter((line) => /^og-[A-Za-z0-9_-]{32}$/.test(line));
      expect(keys).toHaveLength(1);
      const [key] = keys;
      // What a person needs next: the URL, the docs, where the data lives, and a call to paste.
      const url = `http://127.0.0.1:${first.port}`;
      expect(printed).toEqual(
        expect.arrayContaining([
          `Omnigate 1.0.0 is serving ${url}`,
          `API reference  ${url}/docs`,
          `Data           ${dir} (keys, usage records, stored responses)`,
        ]),
      );
      expect(first.stdout()).toContain(`curl -s ${url}/v1/chat/completions -H "Authorization: Bearer ${key}"`);
      expect(first.logs().find((line) => line.msg === 'omnigate listening')).toMatchObject({
        host: '127.0.0.1',
        dataDir: dir,
        models: [
          'local:chat',
          'local:image',
          'local:speech',
          'local:music',
          'local:video',
          'local:search',
          'local:embed',
        ],
      });

      const health = await call(first.port, 'GET', '/health');
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toMatchObject({ status: 'ok', version: '1.0.0' });
      const models = await call(first.port, 'GET', '/v1/models', { key });
      expect(models.status).toBe(200);
      expect(models.headers['x-svc-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
      first.child.kill('SIGTERM');
      expect(await first.exited).toEqual({ code: 0, signal: null });

      const second = await startServer({ OMNIGATE_DATA_DIR: dir });
      expect(second.stdout()).not.toContain(KEY_MESSAGE);
      expect(second.stdout()).not.toContain(key);
      expect(second.stdout()).toContain('-H "Authorization: Bearer $OMNIGATE_API_KEY"');
      expect((await call(second.port, 'GET', '/v1/models', { key })).status).toBe(200);
      second.child.kill('SIGTERM');
      expect(await second.exited).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'registers the keys of OMNIGATE_API_KEYS, prints none, and serves calls made with them',
    async () => {
      const dir = dataDir();
      const server = await startServer({ OMNIGATE_DATA_DIR: dir, OMNIGATE_API_KEYS: 'og-env-key-one, og-env-key-two' });
      expect(server.stdout()).not.toContain(KEY_MESSAGE);
      const answer = await call(server.port, 'POST', '/v1/chat/completions', {
        key: 'og-env-key-two',
        body: { model: 'reference', messages: [{ role: 'user', content: 'hello from a process test' }] },
      });
      expect(answer.status).toBe(200);
      const requestId = answer.headers['x-svc-request-id'];
      expect(answer.headers['x-request-id']).toBe(requestId);
      const completion = JSON.parse(answer.body) as { model: string; choices: Array<{ message: { content: string } }> };
      expect(completion.model).toBe('local:chat');
      expect(completion.choices[0].message.content).toBe('You said: hello from a process test');
      expect((await call(server.port, 'GET', '/v1/models', { key: 'og-not-registered' })).status).toBe(401);

      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(server.logs().map((line) => line.msg)).toEqual(
        expect.arrayContaining(['shutting down: no new connections, finishing in-flight requests', 'stopped']),
      );
      const db = new Database(path.join(dir, 'omnigate.sqlite'), { readonly: true });
      try {
        expect(db.prepare('SELECT name, allowed_models, revoked_at FROM api_keys ORDER BY name').all()).toEqual([
          { name: 'env-1', allowed_models: '[]', revoked_at: null },
          { name: 'env-2', allowed_models: '[]', revoked_at: null },
        ]);
      } finally {
        db.close();
      }
      expect(usageRows(dir)).toEqual([
        expect.objectContaining({
          request_id: requestId,
          operation: 'createChatCompletion',
          model_requested: 'reference',
          model: 'local:chat',
          status: 200,
        }),
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'exits 78 naming the field when OMNIGATE_CONFIG is invalid',
    async () => {
      const dir = dataDir();
      const file = path.join(dir, 'omnigate.yaml');
      writeFileSync(file, 'providers:\n  openai:\n    type: openai-compatible\n    base_url: not-a-url\n');
      const spawned = spawnServer({ OMNIGATE_DATA_DIR: dir, OMNIGATE_CONFIG: file });
      expect(await spawned.exited).toEqual({ code: 78, signal: null });
      expect(spawned.stderr()).toBe(`omnigate: configuration error: ${file}: providers.openai.base_url: Invalid URL\n`);
      expect(spawned.stdout()).toBe('');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'exits 78 naming the variable when the config references an unset environment variable',
    async () => {
      const dir = dataDir();
      const file = path.join(dir, 'omnigate.yaml');
      writeFileSync(
        file,
        'providers:\n  openai:\n    type: openai-compatible\n    base_url: https://api.openai.com/v1\n    api_key: ${OMNIGATE_TEST_UNSET_KEY}\n',
      );
      const spawned = spawnServer({ OMNIGATE_DATA_DIR: dir, OMNIGATE_CONFIG: file });
      expect(await spawned.exited).toEqual({ code: 78, signal: null });
      expect(spawned.stderr()).toBe(
        `omnigate: configuration error: ${file}: providers.openai.api_key: environment variable OMNIGATE_TEST_UNSET_KEY is referenced but not set\n`,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'exits 78 naming the file, without a stack trace, when an alias points at a model that does not exist',
    async () => {
      const dir = dataDir();
      const file = path.join(dir, 'omnigate.yaml');
      writeFileSync(file, 'aliases:\n  fast: local:chatt\n');
      const spawned = spawnServer({ OMNIGATE_DATA_DIR: dir, OMNIGATE_CONFIG: file });
      expect(await spawned.exited).toEqual({ code: 78, signal: null });
      expect(spawned.stderr()).toBe(
        `omnigate: configuration error: ${file}: aliases.fast: unknown model 'local:chatt' (configured: local:chat, local:image, local:speech, local:music, local:video, local:search, local:embed)\n`,
      );
    },
    TEST_TIMEOUT_MS,
  );
});

describe('the compiled build', () => {
  it(
    'builds the validator of every JSON operation before listening with OMNIGATE_WARM_UP=true, and still answers',
    async () => {
      const key = 'sk-process-warm-aaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
      const server = await startServer({
        OMNIGATE_DATA_DIR: dataDir(),
        OMNIGATE_API_KEYS: key,
        OMNIGATE_WARM_UP: 'true',
      });
      const built = server.logs().find((line) => line.msg === 'validator built');
      expect(built?.operations).toBeGreaterThan(40);
      const answer = await call(server.port, 'POST', '/anthropic/v1/messages', {
        key,
        body: { model: 'local:chat', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
      });
      expect(answer.status).toBe(200);
      expect((JSON.parse(answer.body) as { type: string }).type).toBe('message');
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'runs from dist/ without tsx: its media worker threads and the eSpeak child process start from the compiled modules',
    async () => {
      const key = 'sk-process-build-aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
      const server = await startServer({ OMNIGATE_DATA_DIR: dataDir(), OMNIGATE_API_KEYS: key });
      // An image is rendered in a media worker thread; the worker's entry must be the compiled one.
      const image = await call(server.port, 'POST', '/v1/images/generations', {
        key,
        body: { model: 'local:image', prompt: 'a lighthouse at dusk', size: '64x64', response_format: 'b64_json' },
      });
      expect(image.status).toBe(200);
      const png = Buffer.from(
        (JSON.parse(image.body) as { data: Array<{ b64_json: string }> }).data[0].b64_json,
        'base64',
      );
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      // A French voice is eSpeak NG, which runs in a child process started from dist/ too.
      const speech = await call(server.port, 'POST', '/v1/audio/speech', {
        key,
        body: { model: 'local:speech', input: 'bonjour', voice: 'fr', response_format: 'wav' },
      });
      expect(speech.status).toBe(200);
      expect(speech.headers['content-type']).toBe('audio/wav');
      const children = execFileSync('ps', ['-o', 'args=', '--ppid', String(server.child.pid)], { encoding: 'utf8' });
      expect(children).toContain(path.join(ROOT, 'dist', 'engines', 'speech', 'espeak-child.js'));
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT_MS,
  );
});

describe('listening and connection limits', () => {
  it(
    'exits 1 with a one-line reason when the port is taken, instead of running without listening',
    async () => {
      const first = await startServer({ OMNIGATE_DATA_DIR: dataDir(), OMNIGATE_API_KEYS: 'og-busy-port-key' });
      const secondDir = dataDir();
      const second = spawnServer({ OMNIGATE_DATA_DIR: secondDir, PORT: String(first.port) });
      expect(await second.exited).toEqual({ code: 1, signal: null });
      expect(second.stderr()).toBe(`omnigate: cannot listen on 127.0.0.1:${first.port}: EADDRINUSE\n`);
      expect(second.logs().map((line) => line.msg)).not.toContain('omnigate listening');
      // No key is made (and lost) by a start that failed: the next good start still makes and prints one.
      expect(second.stdout()).not.toContain(KEY_MESSAGE);
      const third = await startServer({ OMNIGATE_DATA_DIR: secondDir });
      expect(third.stdout()).toContain(KEY_MESSAGE);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'cuts off clients that never finish their headers or body, also after an early 401',
    async () => {
      const server = await startServer({
        OMNIGATE_DATA_DIR: dataDir(),
        OMNIGATE_API_KEYS: 'og-timeout-test-key',
        OMNIGATE_REQUEST_TIMEOUT_MS: '2000',
        OMNIGATE_HEADERS_TIMEOUT_MS: '1000',
      });
      /** Writes `text` on a raw socket and resolves with what came back and when the server closed it. */
      const hold = (text: string) =>
        new Promise<{ closedAt: number; received: string }>((resolve, reject) => {
          let received = '';
          const socket = connect(server.port, '127.0.0.1', () => socket.write(text));
          socket.setEncoding('utf8');
          socket.on('data', (piece: string) => {
            received += piece;
          });
          socket.on('error', reject);
          socket.on('close', () => resolve({ closedAt: performance.now(), received }));
          setTimeout(() => socket.destroy(new Error('the server kept the connection open for 15 s')), 15_000).unref();
        });
      const lyingLength = hold(
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer og-timeout-test-key\r\n' +
          'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"model":',
      );
      const endlessHeaders = hold('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      const unauthenticated = hold(
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n',
      );
      // The 401 is answered at once; the body that never ends is then read (to discard it, so the client
      // sees the answer) until the request timeout cuts it off like any other unfinished body.
      const early = await unauthenticated;
      expect(early.received).toMatch(/^HTTP\/1\.1 401 /);
      // Order, not time: every held connection is closed by the server (not by `hold`'s 15 s guard, which would
      // reject), the endless headers at the 1 s header deadline before the early answer's endless body is cut at
      // the 2 s request deadline.
      const [, headers] = [await lyingLength, await endlessHeaders];
      expect(headers.closedAt).toBeLessThan(early.closedAt);
      expect((await call(server.port, 'GET', '/health')).status).toBe(200);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('shutting down', () => {
  it(
    'finishes a stream in flight on SIGTERM, refuses new connections, exits 0 promptly and keeps the usage record',
    async () => {
      const upstream = await startFakeUpstream(async (_request, res) => {
        sseHead(res);
        res.write(chunk({ role: 'assistant', content: '' }));
        for (const word of ['Slow', ' and', ' steady']) {
          await new Promise((resolve) => setTimeout(resolve, 400));
          res.write(chunk({ content: word }));
        }
        res.write(chunk({}, 'stop'));
        res.write(
          `data: ${JSON.stringify({ id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1767225600, model: 'drip', choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
      });
      upstreams.push(upstream);
      const dir = dataDir();
      const server = await startServer({
        OMNIGATE_DATA_DIR: dir,
        OMNIGATE_API_KEYS: 'og-shutdown-key',
        OMNIGATE_CONFIG: slowProviderConfig(dir, upstream),
        OMNIGATE_SHUTDOWN_GRACE_MS: '60000',
      });
      // A keep-alive client that would hold its idle connection open for a minute.
      const agent = new Agent({ keepAlive: true, timeout: 60_000 });
      let signalled = 0;
      let refused: unknown;
      const streamed = await new Promise<{ requestId: string; body: string; endedAt: number }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: server.port,
            method: 'POST',
            path: '/v1/chat/completions',
            agent,
            headers: { authorization: 'Bearer og-shutdown-key', 'content-type': 'application/json' },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (piece: string) => {
              body += piece;
              if (!signalled) {
                signalled = Date.now();
                server.child.kill('SIGTERM');
                // While the stream drains, new connections are refused.
                setTimeout(() => {
                  call(server.port, 'GET', '/health').then(
                    (answer) => (refused = answer.status),
                    (error: NodeJS.ErrnoException) => (refused = error.code),
                  );
                }, 300);
              }
            });
            res.on('end', () =>
              resolve({ requestId: res.headers['x-svc-request-id'] as string, body, endedAt: Date.now() }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({ model: 'slow:drip', stream: true, messages: [{ role: 'user', content: 'take your time' }] }),
        );
      });
      const exit = await server.exited;
      const exitedAt = Date.now();
      agent.destroy();

      expect(exit).toEqual({ code: 0, signal: null });
      expect(refused).toBe('ECONNREFUSED');
      const events = readSse(streamed.body);
      expect(events.at(-1)?.data).toBe('[DONE]');
      const text = events
        .slice(0, -1)
        .map(
          (event) =>
            (JSON.parse(event.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ??
            '',
        )
        .join('');
      expect(text).toBe('Slow and steady');
      // The process does not wait for the client to drop its idle keep-alive connection (this client still holds
      // it: `agent.destroy()` comes after), which the server keeps open for 65 s. Waiting for it is a wall-clock
      // behaviour, so this one bound stays in wall time, at half the keep-alive: seconds of load cannot reach it.
      expect(exitedAt - streamed.endedAt).toBeLessThan(32_500);
      expect(server.logs().at(-1)?.msg).toBe('stopped');
      expect(usageRows(dir)).toEqual([
        expect.objectContaining({
          request_id: streamed.requestId,
          operation: 'createChatCompletion',
          model_requested: 'slow:drip',
          model: 'slow:drip',
          provider: 'slow',
          input_tokens: 12,
          output_tokens: 3,
          status: 200,
        }),
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'cuts a stream still running after the grace period, exits 0 and still writes its usage record',
    async () => {
      const upstream = await startFakeUpstream((_request, res) => {
        sseHead(res);
        res.write(chunk({ role: 'assistant', content: '' }));
        res.write(chunk({ content: 'Never' }));
        // …and then nothing: the upstream stalls until it is disconnected.
      });
      upstreams.push(upstream);
      const dir = dataDir();
      const server = await startServer({
        OMNIGATE_DATA_DIR: dir,
        OMNIGATE_API_KEYS: 'og-grace-key',
        OMNIGATE_CONFIG: slowProviderConfig(dir, upstream),
        OMNIGATE_SHUTDOWN_GRACE_MS: '500',
      });
      const streamed = await new Promise<{ requestId: string; body: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: server.port,
            method: 'POST',
            path: '/v1/chat/completions',
            agent: false,
            headers: { authorization: 'Bearer og-grace-key', 'content-type': 'application/json' },
          },
          (res) => {
            let body = '';
            let signalled = false;
            res.setEncoding('utf8');
            res.on('data', (piece: string) => {
              body += piece;
              if (!signalled) {
                signalled = true;
                server.child.kill('SIGTERM');
              }
            });
            const done = () => resolve({ requestId: res.headers['x-svc-request-id'] as string, body });
            res.on('end', done);
            res.on('error', done);
            res.on('aborted', done);
          },
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({ model: 'slow:drip', stream: true, messages: [{ role: 'user', content: 'wait forever' }] }),
        );
      });
      const exit = await server.exited;

      expect(exit).toEqual({ code: 0, signal: null });
      const events = readSse(streamed.body);
      expect(events.map((event) => event.data)).not.toContain('[DONE]');
      expect(JSON.parse(events[1].data).choices[0].delta.content).toBe('Never');
      // The stream says why it ends: the server is shutting down (not "the client closed the request").
      const last = JSON.parse(events.at(-1)!.data) as unknown;
      assertMatchesSchema('ChatCompletionStreamError', last);
      expect(last).toEqual({
        error: {
          message: 'The server is shutting down.',
          type: 'service_unavailable_error',
          param: null,
          code: 'shutting_down',
        },
      });
      const rows = usageRows(dir);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        request_id: streamed.requestId,
        operation: 'createChatCompletion',
        model_requested: 'slow:drip',
        model: 'slow:drip',
        provider: 'slow',
        status: 503,
        // The upstream never reported usage: the record holds the tokenizer's count of what was asked and produced.
        input_tokens: 3 + 3 + (await countTextTokens('user')) + (await countTextTokens('wait forever')),
        output_tokens: await countTextTokens('Never'),
      });
    },
    TEST_TIMEOUT_MS,
  );
});

/** Runs the keys CLI (`npm run keys -- …`) on `dir` as its own process, as an operator would next to the server. */
function keysCli(dir: string, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'server/cli/keys.ts', ...argv],
      { cwd: ROOT, env: environment({ OMNIGATE_DATA_DIR: dir }) },
      (error, stdout) => {
        resolve({ code: error ? Number(error.code) : 0, stdout });
      },
    );
  });
}

describe('keys and data at rest', () => {
  it(
    'warns about a weak key without logging it, keeps the data private, purges expired responses, and applies CLI key changes',
    async () => {
      const dir = dataDir();
      // A data directory from an earlier run, with the default modes, one stored response past the retention
      // and one recent.
      const day = 86_400;
      const seeded = openDatabase(path.join(dir, 'omnigate.sqlite'));
      const store = createResponseStore(seeded);
      for (const [id, age] of [
        ['resp_expired', 31 * day],
        ['resp_recent', day],
      ] as const) {
        await store.save({
          id,
          keyId: 'key_x',
          createdAt: Math.floor(Date.now() / 1000) - age,
          response: { id, output: [] } as never,
          conversation: [],
        });
      }
      seeded.close();
      chmodSync(dir, 0o755);
      chmodSync(path.join(dir, 'omnigate.sqlite'), 0o644);

      const weakKey = 'og-env-key-one';
      const server = await startServer({
        OMNIGATE_DATA_DIR: dir,
        OMNIGATE_API_KEYS: weakKey,
        OMNIGATE_RESPONSE_RETENTION_DAYS: '30',
      });
      expect(server.logs().find((line) => line.msg?.toString().startsWith('weak API key'))).toMatchObject({
        level: 40,
        key: 'env-1',
        weaknesses: ['shorter than 20 characters', 'fewer than 10 different characters'],
      });
      expect(server.logs().find((line) => line.msg === 'purged expired stored responses')).toMatchObject({
        count: 1,
        retentionDays: 30,
      });
      expect(server.stdout() + server.stderr()).not.toContain(weakKey);

      expect(statSync(dir).mode & 0o777).toBe(0o700);
      for (const name of ['omnigate.sqlite', 'omnigate.sqlite-wal', 'omnigate.sqlite-shm', 'omnigate.pepper']) {
        expect(statSync(path.join(dir, name)).mode & 0o777, name).toBe(0o600);
      }
      const raw = ['omnigate.sqlite', 'omnigate.sqlite-wal']
        .map((name) => path.join(dir, name))
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file).toString('latin1'))
        .join('');
      for (let start = 0; start + 8 <= weakKey.length; start += 1) {
        expect(raw).not.toContain(weakKey.slice(start, start + 8));
      }

      const created = await keysCli(dir, 'create', '--name', 'from-cli');
      expect(created.code).toBe(0);
      expect(created.stdout.split('\n')[0]).toBe(`database: ${path.join(dir, 'omnigate.sqlite')}`);
      const id = /created (key_[0-9a-f]{16})/.exec(created.stdout)![1];
      const key = created.stdout.trim().split('\n').pop()!;
      expect((await call(server.port, 'GET', '/v1/models', { key })).status).toBe(200);
      expect((await call(server.port, 'GET', '/v1/models', { key })).status).toBe(200);
      expect(await keysCli(dir, 'revoke', id)).toEqual({
        code: 0,
        stdout: `database: ${path.join(dir, 'omnigate.sqlite')}\nrevoked ${id} (from-cli)\n`,
      });
      // The server hears of it from its change feed (the counter is polled every 250 ms), not from a read per request.
      await vi.waitFor(async () => expect((await call(server.port, 'GET', '/v1/models', { key })).status).toBe(401), {
        timeout: 10_000,
        interval: 50,
      });
      expect((await call(server.port, 'GET', '/v1/models', { key: weakKey })).status).toBe(200);

      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      const db = new Database(path.join(dir, 'omnigate.sqlite'), { readonly: true });
      try {
        expect(db.prepare('SELECT id FROM responses').pluck().all()).toEqual(['resp_recent']);
      } finally {
        db.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
