/**
 * Codex CLI (`codex exec`) with Omnigate as both its model provider (the reference model, which calls a tool
 * when the prompt says `call <tool> {args}`) and an MCP server (`[mcp_servers.omnigate]` with `url` and
 * `bearer_token_env_var`, the README's form): Codex connects, offers our tools to the model, calls the one the
 * model picks, and the tool's answer comes back.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend, type Backend } from './support/backends.js';
import { codexConfig } from './support/codex-config.js';
import { describeRun, runCli, tempDir } from './support/run-cli.js';

describe('Codex with Omnigate as its MCP server', () => {
  let backend: Backend;
  let temp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    backend = await startBackend('local');
    temp = tempDir('codex-mcp');
    for (const dir of ['home', 'codex', 'work']) {
      mkdirSync(path.join(temp.dir, dir));
    }
    const mcp = `\n[mcp_servers.omnigate]\nurl = "${backend.gateway.origin}/v1/mcp"\nbearer_token_env_var = "OMNIGATE_API_KEY"\n`;
    writeFileSync(
      path.join(temp.dir, 'codex', 'config.toml'),
      codexConfig(backend.gateway.origin, 'gpt-5-codex') + mcp,
    );
  });

  afterAll(async () => {
    await backend?.close();
    temp?.remove();
  });

  it('calls an Omnigate MCP tool and reports its result', async () => {
    const last = path.join(temp.dir, 'last.txt');
    // Codex offers an MCP server's tools inside a `namespace` tool (`mcp__omnigate__`), each under its own name,
    // which is the name the model calls; the gateway flattens the namespace and puts it back on the call.
    const prompt = `call chat ${JSON.stringify({ prompt: 'hello pelican' })}`;
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
        '--json',
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
    expect(result.code, describeRun(result)).toBe(0);
    const events = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map(
        (line) =>
          JSON.parse(line) as {
            type: string;
            item?: { type: string; server?: string; tool?: string; status?: string };
          },
      );
    const call = events.find((event) => event.type === 'item.completed' && event.item?.type === 'mcp_tool_call');
    expect(call?.item, describeRun(result)).toMatchObject({ server: 'omnigate', tool: 'chat', status: 'completed' });
    expect(readFileSync(last, 'utf8'), describeRun(result)).toContain('You said: hello pelican');
    const records = await backend.gateway.usageRecords();
    expect(records.some((record) => record.operation === 'mcpPost:chat')).toBe(true);
  });
});
