/**
 * Spec-driven fuzz: for every operation of openapi/api.yaml, valid-ish requests generated from its schemas
 * and malformed ones (see test/fuzz/fuzz-requests.ts for the kinds), sent byte for byte to one in-memory app
 * on loopback. Whatever is sent, the answer must not be a 5xx other than a 503 the operation declares, must
 * carry the request-id headers, and an error must come in its family's envelope; after each operation the
 * server must still answer /health and a local:chat call. The seed is fixed, so a failure is reproducible;
 * FUZZ_SEED=<n> explores other inputs.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../../server/spec/load-spec.js';
import { fuzzRequests, kindsFor } from '../fuzz/fuzz-requests.js';
import { closeAgent, describeRequest, sendRaw, type RawRequest, type RawResponse } from '../fuzz/raw-request.js';
import { operationAt, specOperations } from '../fuzz/spec-operations.js';
import { createTestApp } from '../helpers/create-test-app.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601);
/** Runs per operation and kind: ~32 operations × ~12 kinds × RUNS ≈ 3,000 requests. */
const RUNS = 8;
const REQUEST_ID = /^req_[0-9a-f]{32}$/;

const document = loadSpec().document;
const operations = specOperations(document);
const { app, key } = await createTestApp();
let server: Server;
let port: number;

beforeAll(async () => {
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  closeAgent();
  await new Promise((resolve) => server.close(resolve));
});

function fail(req: RawRequest, res: RawResponse, why: string): never {
  throw new Error(
    `${why}\n→ ${res.status} ${res.headers['content-type'] ?? ''}\n${res.text.slice(0, 500)}\nfor ${describeRequest(req)}`,
  );
}

/** The three promises of the fuzz, for one answer. */
function checkAnswer(req: RawRequest, res: RawResponse): void {
  const path = req.path.split('?')[0];
  const operation = operationAt(operations, req.method, path);
  if (res.status >= 500 && !(res.status === 503 && operation?.declaresServiceUnavailable)) {
    fail(
      req,
      res,
      `a ${res.status} where ${operation ? `${operation.operationId} declares no such status` : 'no operation matches'}`,
    );
  }
  const id = res.headers['x-svc-request-id'];
  if (typeof id !== 'string' || !REQUEST_ID.test(id) || res.headers['x-request-id'] !== id) {
    fail(
      req,
      res,
      `request-id headers missing or different: x-svc-request-id=${id}, x-request-id=${res.headers['x-request-id']}`,
    );
  }
  const family = /^\/anthropic(\/|$)/.test(path) ? 'anthropic' : /^\/v1\/mcp(\/|$)/.test(path) ? 'mcp' : 'openai';
  if (family === 'anthropic' && res.headers['request-id'] !== id) {
    fail(req, res, 'request-id header missing under /anthropic');
  }
  if (res.status < 400 || req.method === 'HEAD') {
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    fail(req, res, 'an error that is not JSON');
  }
  try {
    if (family === 'anthropic') {
      assertMatchesSchema('AnthropicErrorResponse', body);
      expect((body as { request_id: unknown }).request_id).toBe(id);
    } else if (family === 'mcp') {
      // MCP answers every error in JSON-RPC, authentication and rate limits included.
      assertMatchesSchema('JsonRpcErrorResponse', body);
    } else {
      assertMatchesSchema('ErrorResponse', body);
    }
  } catch (error) {
    fail(req, res, `an error outside the ${family} envelope: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** The server still serves: health is up and the built-in model answers a normal chat call. */
async function expectStillServing(): Promise<void> {
  const health = await sendRaw(port, { kind: 'health', method: 'GET', path: '/health', headers: {} });
  expect(health.status).toBe(200);
  const chat = await sendRaw(port, {
    kind: 'chat',
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ model: 'local:chat', messages: [{ role: 'user', content: 'still there?' }] })),
  });
  expect(chat.status).toBe(200);
  expect(JSON.parse(chat.text).choices[0].message.content).toBe('You said: still there?');
}

it('covers every operation of the spec', () => {
  // Counted in the YAML text, so an operation under a method the fuzz does not know is noticed.
  const inYaml = loadSpec().yaml.match(/^ {6}operationId: /gm) ?? [];
  expect(operations.map((op) => op.operationId)).toHaveLength(inYaml.length);
});

describe.each(operations)('$method $path ($operationId)', (operation) => {
  it.each(kindsFor(operation))(
    '%s',
    async (kind) => {
      await fc.assert(
        fc.asyncProperty(fuzzRequests(operation, kind, key, document.components ?? {}), async (req) => {
          checkAnswer(req, await sendRaw(port, req));
        }),
        // No shrinking: each step is a request, and the printed request is already small enough to read.
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      // A hang guard for RUNS requests that each render real media on a busy machine, not a speed limit.
    },
    300_000,
  );

  it('still serves /health and local:chat afterwards', expectStillServing);
});
