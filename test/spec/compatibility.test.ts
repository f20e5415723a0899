/**
 * The breaking-change gate (`npm run contract:diff`, scripts/contract-diff.mjs) really gates: against the 1.0.0
 * snapshot, a copy of the spec with a breaking change fails, an additive change passes, and so does the spec as
 * it is — whose only breaking changes are those listed in openapi/allowed-breaking-changes.yaml (`maxItems` bounds,
 * the MCP endpoint's 401/429 bodies, the `insufficient_quota` error type) — and a listed change made otherwise (a
 * bound lowered further, another error body, another enum value) fails again.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const SPEC = join(ROOT, 'openapi/api.yaml');
const SNAPSHOT = join(ROOT, 'openapi/snapshots/api-1.0.0.yaml');
const GATE = join(ROOT, 'scripts/contract-diff.mjs');

type Node = Record<string, any>;

interface DiffResult {
  exitCode: number;
  output: string;
}

let workDirectory: string;

beforeAll(() => {
  workDirectory = mkdtempSync(join(tmpdir(), 'omnigate-diff-'));
});

afterAll(() => {
  rmSync(workDirectory, { recursive: true, force: true });
});

async function diffAgainstSnapshot(revision: string): Promise<DiffResult> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  try {
    const { stdout, stderr } = await run(process.execPath, [GATE, revision], { cwd: ROOT, env, timeout: 55_000 });
    return { exitCode: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string; message: string };
    return {
      exitCode: typeof failure.code === 'number' ? failure.code : -1,
      output: `${failure.stdout ?? ''}${failure.stderr ?? ''}\n${failure.message}`,
    };
  }
}

/** Copies the spec to a temp file, applies `change` to the parsed copy and writes it back. */
function changedSpec(name: string, change: (document: Node) => void): string {
  const document = parse(readFileSync(SPEC, 'utf8')) as Node;
  change(document);
  const path = join(workDirectory, `${name}.yaml`);
  writeFileSync(path, stringify(document));
  return path;
}

interface Change {
  name: string;
  apply: (document: Node) => void;
  /** A rule id or phrase the diff report must contain for this change. */
  reports: string;
}

// Each `redocly diff` run costs about 1.5 s of CPU, so the changes of one kind share a revision; every
// change must still show up in the report on its own.
const BREAKING: Change[] = [
  {
    name: 'removing an operation (DELETE /v1/files/{id})',
    apply: (document) => {
      delete document.paths['/v1/files/{id}'].delete;
    },
    reports: 'Operation `DELETE /v1/files/{id}` was removed. (operation-removed)',
  },
  {
    name: 'removing a whole path (/v1/models)',
    // The paths added since 1.0.0 of the same shape (`/v1/<one segment>`: embeddings, rerank, …) and the models
    // paths go too: left alone, redocly pairs one of them with the removed path as the same path renamed and
    // reports every difference between the two instead of one removal.
    apply: (document) => {
      const before = new Set(Object.keys((parse(readFileSync(SNAPSHOT, 'utf8')) as Node).paths));
      const pairable = (path: string) => path.includes('/models') || (!before.has(path) && /^\/v1\/[^/]+$/.test(path));
      for (const path of Object.keys(document.paths).filter(pairable)) {
        delete document.paths[path];
      }
    },
    reports: 'Path `/v1/models` was removed. (path-removed)',
  },
  {
    name: 'making an optional request property required (ChatCompletionRequest.temperature)',
    apply: (document) => {
      const request = document.components.schemas.ChatCompletionRequest;
      expect(request.required).not.toContain('temperature');
      request.required.push('temperature');
    },
    reports: 'Properties of `ChatCompletionRequest` became required: `temperature`. (required-properties-added)',
  },
  {
    name: 'lowering an allowed bound further (Anthropic stop_sequences maxItems 256 → 255)',
    apply: (document) => {
      const stops = document.components.schemas.AnthropicMessageCreateRequest.properties.stop_sequences;
      expect(stops.maxItems).toBe(256);
      stops.maxItems = 255;
    },
    reports: "`maxItems` of `stop_sequences` was set to '255'.",
  },
  {
    name: 'adding an unlisted value to a listed enum (ErrorObject.type gains `billing_error`)',
    // `insufficient_quota` is listed for this enum; any other value added beside it is not.
    apply: (document) => {
      const type = document.components.schemas.ErrorObject.properties.type;
      expect(type.enum).toContain('insufficient_quota');
      type.enum.push('billing_error');
    },
    reports: "Enum of `type` gained values: 'insufficient_quota', 'billing_error'.",
  },
  {
    name: 'changing a listed response body otherwise (the MCP 401 error without its message)',
    // The JSON-RPC 401 body is a listed change; dropping `message` from it as well is not.
    apply: (document) => {
      const rpcError = structuredClone(document.components.schemas.JsonRpcError);
      expect(rpcError.properties.message).toBeDefined();
      delete rpcError.properties.message;
      const body = structuredClone(document.components.schemas.JsonRpcErrorResponse);
      body.properties.error = rpcError;
      document.components.responses.McpUnauthorized.content['application/json'].schema = body;
    },
    reports: 'Property `message` of `error` was removed. (property-removed)',
  },
];

const ADDITIVE: Change[] = [
  {
    name: 'adding a new operation on a new path (GET /v1/ping)',
    apply: (document) => {
      document.paths['/v1/ping'] = {
        get: {
          operationId: 'ping',
          tags: ['Extensions'],
          summary: 'Ping',
          description: 'Answers that the server is up.',
          responses: {
            '200': {
              description: 'Pong.',
              headers: { 'x-svc-request-id': { $ref: '#/components/headers/RequestId' } },
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
                  example: { ok: true },
                },
              },
            },
          },
        },
      };
    },
    reports: '/v1/ping',
  },
  {
    name: 'adding an optional request property (ChatCompletionRequest.x_trace)',
    apply: (document) => {
      document.components.schemas.ChatCompletionRequest.properties.x_trace = {
        type: 'string',
        description: 'Trace tag.',
      };
    },
    reports: 'x_trace',
  },
];

function applyAll(changes: Change[]): (document: Node) => void {
  return (document) => changes.forEach((change) => change.apply(document));
}

describe.concurrent('redocly diff against openapi/snapshots/api-1.0.0.yaml', { timeout: 60_000 }, () => {
  it('passes for the current spec, copied unchanged', async () => {
    const copy = join(workDirectory, 'unchanged.yaml');
    copyFileSync(SPEC, copy);
    const result = await diffAgainstSnapshot(copy);
    expect(result.exitCode, result.output).toBe(0);
    // Additive changes since the snapshot (new codes, limits described) are minor or patch; the majors are the
    // listed bounds, each with its value.
    expect(result.output).toMatch(/each listed in openapi\/allowed-breaking-changes.yaml/);
  });

  it('fails on breaking changes, naming each one', async () => {
    const result = await diffAgainstSnapshot(changedSpec('breaking', applyAll(BREAKING)));
    // Exactly 1: redocly's "diff failed"; a crash or a timeout must not pass for a detected break.
    expect(result.exitCode, result.output).toBe(1);
    expect(result.output).toContain(`${BREAKING.length} breaking change(s) not listed`);
    for (const change of BREAKING) {
      expect(result.output, change.name).toContain(change.reports);
    }
  });

  it('passes additive changes as minor', async () => {
    const result = await diffAgainstSnapshot(changedSpec('additive', applyAll(ADDITIVE)));
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toMatch(/\d+ major, [1-9]\d* minor/);
    expect(result.output).toMatch(/each listed in openapi\/allowed-breaking-changes.yaml/);
    for (const change of ADDITIVE) {
      expect(result.output, change.name).toContain(change.reports);
    }
  });
});
