/**
 * Claude Code (`@anthropic-ai/claude-code`, headless `claude -p`) pointed at Omnigate's Anthropic dialect,
 * unmodified: a plain prompt, a streamed reply (stream-json with partial messages) and a tool loop with its
 * `Read` tool, against the reference model, an Anthropic upstream (native passthrough) and an
 * OpenAI-compatible upstream (Anthropic → chat translation). Everything runs on loopback in a temp dir.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, startBackend, type Backend } from './support/backends.js';
import { FAKE_REASONING } from './support/fakes.js';
import { describeRun, runCli, tempDir, type CliResult } from './support/run-cli.js';

const MODEL = 'claude-sonnet-4-5';
const SECRET = 'The secret word is pelican.';

function claudeEnv(home: string, origin: string, key: string, model: string): Record<string, string> {
  return {
    HOME: home,
    TMPDIR: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: `${origin}/anthropic`,
    ANTHROPIC_API_KEY: key,
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: model,
    CLAUDE_CODE_SUBAGENT_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
  };
}

const CASES: Array<{ backend: (typeof BACKENDS)[number]; model: string }> = [
  ...BACKENDS.map((backend) => ({ backend, model: MODEL })),
  // Upstreams that think: thinking blocks (signed, or translated from reasoning_content) come back to
  // Claude Code, which replays them in the tool loop.
  { backend: 'anthropic-fake', model: 'claude-think-4' },
  { backend: 'openai-fake', model: 'claude-think-4' },
];

describe.each(CASES)('Claude Code: $backend $model', ({ backend: backendName, model }) => {
  let backend: Backend;
  let temp: ReturnType<typeof tempDir>;
  let secretFile: string;

  beforeAll(async () => {
    backend = await startBackend(backendName);
    temp = tempDir('claude');
    mkdirSync(path.join(temp.dir, '.claude'));
    mkdirSync(path.join(temp.dir, 'work'));
    secretFile = path.join(temp.dir, 'work', 'secret.txt');
    writeFileSync(secretFile, `${SECRET}\n`);
  });

  afterAll(async () => {
    await backend?.close();
    temp?.remove();
  });

  function claude(prompt: string, format: 'text' | 'stream-json' = 'text'): Promise<CliResult> {
    const output =
      format === 'text'
        ? ['--output-format', 'text']
        : ['--output-format', 'stream-json', '--verbose', '--include-partial-messages'];
    return runCli(
      'claude',
      [
        '-p',
        prompt,
        '--model',
        model,
        ...output,
        '--no-session-persistence',
        '--strict-mcp-config',
        '--setting-sources',
        '',
        '--permission-mode',
        'dontAsk',
        '--tools',
        'Read',
        '--allowedTools',
        'Read',
        '--max-turns',
        '4',
      ],
      {
        cwd: path.join(temp.dir, 'work'),
        env: claudeEnv(temp.dir, backend.gateway.origin, backend.gateway.key, model),
        timeoutMs: 110_000,
      },
    );
  }

  it('answers a plain prompt', async () => {
    const result = await claude('Hello from Claude Code');
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toContain(backend.echo);
    expect(result.stdout).toContain('Hello from Claude Code');
    expect(result.stdout).not.toContain(FAKE_REASONING);
  });

  it('streams the reply (stream-json with partial messages)', async () => {
    const result = await claude('Stream this reply please', 'stream-json');
    expect(result.code, describeRun(result)).toBe(0);
    const events = result.stdout
      .split('\n')
      .filter((line) => line.trim())
      .map(
        (line) =>
          JSON.parse(line) as {
            type: string;
            event?: { type: string; delta?: { type: string; text?: string } };
            result?: string;
            is_error?: boolean;
          },
      );
    const deltas = events.filter(
      (event) =>
        event.type === 'stream_event' &&
        event.event?.type === 'content_block_delta' &&
        event.event.delta?.type === 'text_delta',
    );
    expect(deltas.length, describeRun(result)).toBeGreaterThan(1);
    const streamed = deltas.map((event) => event.event!.delta!.text).join('');
    expect(streamed).toContain('Stream this reply please');
    expect(streamed).not.toContain(FAKE_REASONING);
    if (model.includes('think')) {
      // The upstream's reasoning reaches Claude Code as thinking deltas, all before the text.
      const kinds = events
        .filter((event) => event.type === 'stream_event' && event.event?.type === 'content_block_delta')
        .map((event) => event.event!.delta!.type);
      expect(kinds).toContain('thinking_delta');
      expect(kinds.lastIndexOf('thinking_delta')).toBeLessThan(kinds.indexOf('text_delta'));
    }
    const final = events.find((event) => event.type === 'result');
    expect(final?.is_error).toBe(false);
    expect(final?.result).toContain(streamed.trim());
  });

  it('runs a tool loop with its Read tool and reports the file content', async () => {
    const result = await claude(`call Read ${JSON.stringify({ file_path: secretFile })}`);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toContain(backend.toolReport('Read'));
    expect(result.stdout).toContain(`1\t${SECRET}`);
    expect(result.stdout).not.toContain(FAKE_REASONING);
    if (backend.fake) {
      // The upstream really saw the tool result that Claude Code sent back (not a gateway echo).
      const sawResult = backend.fake.requests.some((request) => JSON.stringify(request.body).includes(SECRET));
      expect(sawResult).toBe(true);
    }
  });

  it('got no error from the gateway on any call', async () => {
    const records = await backend.gateway.usageRecords();
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((record) => record.status >= 400)).toEqual([]);
  });
});
