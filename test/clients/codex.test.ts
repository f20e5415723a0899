/**
 * Codex CLI (`@openai/codex`, `codex exec`) pointed at Omnigate's Responses dialect through a
 * `model_providers` entry, unmodified: a plain prompt, a streamed reply (`--json` events) and a tool loop
 * with its `exec_command` tool in the read-only sandbox, against the reference model, an Anthropic
 * upstream (Responses → Messages translation) and an OpenAI-compatible upstream (Responses → chat).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, startBackend, type Backend } from './support/backends.js';
import { codexConfig } from './support/codex-config.js';
import { FAKE_REASONING, FAKE_SIGNATURE } from './support/fakes.js';
import { describeRun, runCli, tempDir, type CliResult } from './support/run-cli.js';

const MODEL = 'gpt-5-codex';

const CASES: Array<{ backend: (typeof BACKENDS)[number]; model: string }> = [
  ...BACKENDS.map((backend) => ({ backend, model: MODEL })),
  // Upstreams that reason: Codex asks for `reasoning.encrypted_content` and replays reasoning items.
  { backend: 'anthropic-fake', model: 'gpt-5-think' },
  { backend: 'openai-fake', model: 'gpt-5-think' },
];

describe.each(CASES)('Codex exec: $backend $model', ({ backend: backendName, model }) => {
  let backend: Backend;
  let temp: ReturnType<typeof tempDir>;
  let run = 0;

  beforeAll(async () => {
    backend = await startBackend(backendName);
    temp = tempDir('codex');
    for (const dir of ['home', 'codex', 'work']) {
      mkdirSync(path.join(temp.dir, dir));
    }
    writeFileSync(path.join(temp.dir, 'codex', 'config.toml'), codexConfig(backend.gateway.origin, model));
  });

  afterAll(async () => {
    await backend?.close();
    temp?.remove();
  });

  async function codex(prompt: string, json = false): Promise<CliResult & { last: string }> {
    run += 1;
    const last = path.join(temp.dir, `last-${run}.txt`);
    const result = await runCli(
      'codex',
      [
        'exec',
        '--skip-git-repo-check',
        '--ephemeral',
        '-s',
        'read-only',
        '-C',
        path.join(temp.dir, 'work'),
        '--color',
        'never',
        ...(json ? ['--json'] : []),
        '-o',
        last,
        prompt,
      ],
      {
        cwd: path.join(temp.dir, 'work'),
        env: {
          HOME: path.join(temp.dir, 'home'),
          TMPDIR: temp.dir,
          CODEX_HOME: path.join(temp.dir, 'codex'),
          OMNIGATE_API_KEY: backend.gateway.key,
        },
        timeoutMs: 110_000,
      },
    );
    let lastText = '';
    try {
      lastText = readFileSync(last, 'utf8');
    } catch {
      // not written: the run failed
    }
    return { ...result, last: lastText };
  }

  it('answers a plain prompt', async () => {
    const result = await codex('Hello from Codex');
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.last).toContain(backend.echo);
    expect(result.last).toContain('Hello from Codex');
    expect(result.last).not.toContain(FAKE_REASONING);
  });

  it('streams the reply (--json events)', async () => {
    const result = await codex('Stream this reply please', true);
    expect(result.code, describeRun(result)).toBe(0);
    const events = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; item?: { type: string; text?: string } });
    const message = events.find((event) => event.type === 'item.completed' && event.item?.type === 'agent_message');
    expect(message?.item?.text, describeRun(result)).toContain('Stream this reply please');
    expect(events.some((event) => event.type === 'turn.completed')).toBe(true);
    expect(result.last).toContain('Stream this reply please');
  });

  it('runs a tool loop with exec_command and reports its output', async () => {
    const result = await codex('call exec_command {"cmd":"echo flamingo"}');
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.last).toContain(backend.toolReport('exec_command'));
    expect(result.last).toMatch(/Output:\n.*flamingo/);
    expect(result.last).not.toContain(FAKE_REASONING);
    if (backend.fake) {
      const sawOutput = backend.fake.requests.some((request) => JSON.stringify(request.body).includes('flamingo\\n'));
      expect(sawOutput).toBe(true);
    }
    if (backendName === 'anthropic-fake' && model.includes('think')) {
      // Codex keeps the reasoning as an encrypted item (store: false) and replays it; the gateway must hand
      // the signed thinking block back to Anthropic ahead of the tool_use, as Anthropic requires.
      const replayed = backend.fake!.requests.some((request) =>
        (request.body as { messages: Array<{ role: string; content: unknown }> }).messages.some(
          (message) =>
            message.role === 'assistant' &&
            Array.isArray(message.content) &&
            (message.content as Array<{ type: string; signature?: string }>)[0]?.type === 'thinking' &&
            (message.content as Array<{ type: string; signature?: string }>)[0]?.signature === FAKE_SIGNATURE,
        ),
      );
      expect(replayed).toBe(true);
    }
  });

  it('got no error from the gateway on any call', async () => {
    const records = await backend.gateway.usageRecords();
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((record) => record.status >= 400)).toEqual([]);
  });
});

describe('Codex exec: namespaced tools', () => {
  let backend: Backend;
  let temp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    backend = await startBackend('local');
    temp = tempDir('codex-ns');
    for (const dir of ['home', 'codex', 'work']) {
      mkdirSync(path.join(temp.dir, dir));
    }
    writeFileSync(path.join(temp.dir, 'codex', 'config.toml'), codexConfig(backend.gateway.origin, MODEL));
  });

  afterAll(async () => {
    await backend?.close();
    temp?.remove();
  });

  // Codex offers its multi-agent tools inside `{type: "namespace", name: "multi_agent_v1", tools: [...]}`. The
  // gateway flattens them for the model and answers the call as `{type: "function_call", name: "wait_agent",
  // namespace: "multi_agent_v1"}`; without that namespace Codex cannot route it ("unsupported call:
  // wait_agent"). Codex replays the namespace on the next turn's function_call input item, which is accepted.
  it('routes a call of a namespaced tool back to Codex', async () => {
    const last = path.join(temp.dir, 'last.txt');
    const result = await runCli(
      'codex',
      [
        'exec',
        '--skip-git-repo-check',
        '--ephemeral',
        '-s',
        'read-only',
        '-C',
        path.join(temp.dir, 'work'),
        '--color',
        'never',
        '-o',
        last,
        'call wait_agent {"targets":["nobody"],"timeout_ms":10}',
      ],
      {
        cwd: path.join(temp.dir, 'work'),
        env: {
          HOME: path.join(temp.dir, 'home'),
          TMPDIR: temp.dir,
          CODEX_HOME: path.join(temp.dir, 'codex'),
          OMNIGATE_API_KEY: backend.gateway.key,
        },
        timeoutMs: 110_000,
      },
    );
    expect(result.code, describeRun(result)).toBe(0);
    const text = readFileSync(last, 'utf8');
    expect(text).toContain('Tool wait_agent returned: ');
    expect(text).not.toContain('unsupported call');
  });
});
