/**
 * Every shell command of the README, run as printed against the real server process, so the README cannot
 * drift from what the code does. Commands are taken from its ```bash / ```sh blocks, joined across `\`
 * continuations, and run one by one with bash. `curl` runs with `--fail-with-body`, so an error answer fails
 * the test. The only changes made to a command are the placeholders a reader fills in themselves (PLACEHOLDERS).
 * Commands whose program cannot run in this suite are listed in NOT_RUN_HERE with the reason and the test
 * that covers them instead; an unknown program fails the test, so a new README command must be handled here.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../server/config.js';
import { probeAudio } from '../helpers/probe-audio.js';
import { dataDir, killServers, ROOT, startServer, type Started } from '../helpers/spawn-server.js';

const NOT_RUN_HERE: Record<string, string> = {
  npm: '`npm install` and `npm start` are what CI itself runs; the start is covered by test/contract/process.test.ts',
  docker: 'no Docker engine here: npm run test:container builds and runs the image with Podman instead',
  claude: 'Claude Code runs in the real-client suite (npm run test:clients)',
  codex: 'Codex CLI runs in the real-client suite (npm run test:clients)',
  M: 'a shell variable for the Claude Code settings above it',
  OMNIGATE_DATABASE_URL:
    'a start on a PostgreSQL database named in the URL: test/contract/database-gone.test.ts starts the server so on its own PostgreSQL',
  openssl: "makes compose.scale.yaml's pepper file; test/contract/compose-scale.test.ts checks the file it names",
};

const KEY = 'og-readme-commands-test-key-0123456789abc';
/** The server's OMNIGATE_ADMIN_KEY, which the admin API commands read from the reader's environment. */
const ADMIN_KEY = 'readme-commands-test-admin-key-0123456789';

interface Command {
  text: string;
  program: string;
}

function readmeCommands(): Command[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const commands: Command[] = [];
  for (const [, body] of readme.matchAll(/```(?:bash|sh)\n([\s\S]*?)```/g)) {
    const joined = body.replace(/\\\n\s*/g, ' ');
    let pending = '';
    for (const line of joined.split('\n')) {
      // A quoted argument may span lines (the streaming curl's JSON body): keep reading until quotes close.
      pending = pending ? `${pending}\n${line}` : line;
      if ((pending.match(/'/g) ?? []).length % 2 === 1) {
        continue;
      }
      const text = pending.replace(/(^|\s)#.*$/, '').trim();
      pending = '';
      if (text) {
        commands.push({ text, program: text.split(/\s+/)[0].split('=')[0] });
      }
    }
  }
  return commands;
}

let server: Started;
let configFile: string;
let outputDir: string;
const state = { lastKeyId: '' };

beforeAll(async () => {
  const dir = dataDir();
  configFile = path.join(dir, 'omnigate.yaml');
  outputDir = dir;
  writeFileSync(configFile, 'aliases:\n  fast: local:chat\n');
  server = await startServer({ OMNIGATE_DATA_DIR: dir, OMNIGATE_API_KEYS: KEY, OMNIGATE_ADMIN_KEY: ADMIN_KEY });
}, 120_000);

afterAll(() => killServers());

/** What a reader fills in, and what this test fills in for them. */
function PLACEHOLDERS(text: string): string {
  return (
    text
      .replaceAll('http://127.0.0.1:8080', `http://127.0.0.1:${server.port}`)
      .replaceAll('og-…', KEY)
      .replaceAll('key_3f9a…', state.lastKeyId)
      .replaceAll(' omnigate.yaml', ` ${configFile}`)
      // Files a command writes (`-o hello.mp3`) go to the test's own directory, not the checkout.
      .replace(/ -o (?!\/)(\S+)/, (_match, file: string) => ` -o ${path.join(outputDir, file)}`)
      .replace(/^curl /, 'curl --fail-with-body --max-time 30 ')
  );
}

function run(text: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', text], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe('README configuration examples', () => {
  it('parses every YAML example as a configuration file', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const examples = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) {
      expect(
        () =>
          parseConfigFile(
            example,
            { OPENAI_API_KEY: 'x', ANTHROPIC_API_KEY: 'y', BRAVE_API_KEY: 'b', TAVILY_API_KEY: 't' },
            'README',
          ),
        example,
      ).not.toThrow();
    }
  });
});

describe('README commands', () => {
  const commands = readmeCommands();

  it('finds the commands (a README without them would pass vacuously)', () => {
    expect(commands.filter((command) => command.program === 'curl').length).toBeGreaterThanOrEqual(3);
    expect(commands.filter((command) => command.text.startsWith('npx omnigate')).length).toBeGreaterThanOrEqual(5);
  });

  it('runs every command that can run here, in order, each succeeding', { timeout: 300_000 }, async () => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      OMNIGATE_DATA_DIR: path.dirname(configFile),
      OMNIGATE_ADMIN_KEY: ADMIN_KEY,
    };
    const ran: string[] = [];
    for (const command of commands) {
      if (NOT_RUN_HERE[command.program]) {
        continue;
      }
      expect(
        ['curl', 'npx', 'export'],
        `a README command this test does not know how to run: ${command.text}`,
      ).toContain(command.program);
      const text = PLACEHOLDERS(command.text);
      if (command.program === 'export') {
        for (const [, name, value] of text.matchAll(/([A-Z_]+)=("[^"]*"|\S+)/g)) {
          env[name] = value.replace(/^"|"$/g, '');
        }
        continue;
      }
      const { code, output } = await run(text, env);
      expect(code, `${text}\n${output}`).toBe(0);
      if (text.includes('keys create')) {
        // The README's `revoke key_3f9a…` then revokes the key just created, as a reader would.
        state.lastKeyId = /key_[0-9a-f]+/.exec(output)?.[0] ?? state.lastKeyId;
      }
      ran.push(text);
    }
    expect(ran.length).toBeGreaterThanOrEqual(10);
    // What the media commands wrote is real audio, not an error page saved under a .mp3 name.
    const written = ran.flatMap((text) => [...text.matchAll(/ -o (\S+\.mp3)/g)].map((match) => match[1]));
    expect(written.length).toBeGreaterThanOrEqual(2);
    for (const file of written) {
      const probe = await probeAudio(readFileSync(file), 'mp3');
      expect(probe.codec, file).toBe('mp3');
      expect(probe.decodedSeconds, file).toBeGreaterThan(0.5);
    }
  });
});
