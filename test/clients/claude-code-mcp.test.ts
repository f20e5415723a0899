/**
 * Claude Code (`@anthropic-ai/claude-code`, headless) with Omnigate as both its model (the reference model,
 * which calls a tool when the prompt says `call <tool> {args}`) and its MCP server at `/v1/mcp` over HTTP with
 * the bearer key: Claude Code connects, offers our tools to the model as `mcp__omnigate__<tool>`, calls the one
 * the model picks, and hands the result back. Proves the README's MCP connection works with the real agent.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend, type Backend } from './support/backends.js';
import { describeRun, runCli, tempDir } from './support/run-cli.js';

const MODEL = 'claude-sonnet-4-5';

describe('Claude Code with Omnigate as its MCP server', () => {
  let backend: Backend;
  let temp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    backend = await startBackend('local');
    temp = tempDir('claude-mcp');
    mkdirSync(path.join(temp.dir, '.claude'));
    mkdirSync(path.join(temp.dir, 'work'));
  });

  afterAll(async () => {
    await backend?.close();
    temp?.remove();
  });

  it('calls an Omnigate MCP tool and reports its result', async () => {
    const { origin, key } = backend.gateway;
    const mcpConfig = JSON.stringify({
      mcpServers: { omnigate: { type: 'http', url: `${origin}/v1/mcp`, headers: { Authorization: `Bearer ${key}` } } },
    });
    const tool = 'mcp__omnigate__chat';
    const result = await runCli(
      'claude',
      [
        '-p',
        `call ${tool} ${JSON.stringify({ prompt: 'hello pelican' })}`,
        '--model',
        MODEL,
        '--output-format',
        'text',
        '--no-session-persistence',
        '--strict-mcp-config',
        '--mcp-config',
        mcpConfig,
        '--setting-sources',
        '',
        '--permission-mode',
        'dontAsk',
        '--allowedTools',
        tool,
        // No built-in tools: the reference model calls the first offered tool its prompt names, and Claude Code's
        // own reminders in the prompt name some of its built-in tools.
        '--tools',
        '',
        '--max-turns',
        '4',
      ],
      {
        cwd: path.join(temp.dir, 'work'),
        env: {
          HOME: temp.dir,
          TMPDIR: temp.dir,
          CLAUDE_CONFIG_DIR: path.join(temp.dir, '.claude'),
          ANTHROPIC_BASE_URL: `${origin}/anthropic`,
          ANTHROPIC_API_KEY: key,
          ANTHROPIC_MODEL: MODEL,
          ANTHROPIC_SMALL_FAST_MODEL: MODEL,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
        },
        timeoutMs: 110_000,
      },
    );
    expect(result.code, describeRun(result)).toBe(0);
    // The reference model reports the tool result it got back: the MCP chat tool's own answer, i.e. the
    // reference model echoing the prompt the tool was given.
    expect(result.stdout, describeRun(result)).toContain(backend.toolReport(tool));
    expect(result.stdout, describeRun(result)).toContain('You said: hello pelican');
    const records = await backend.gateway.usageRecords();
    expect(
      records.some((record) => record.operation === 'mcpPost:chat'),
      JSON.stringify(records.map((record) => record.operation)),
    ).toBe(true);
  });
});
