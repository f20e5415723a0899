/**
 * Proves that clients in other languages can be generated from openapi/api.yaml, offline, with Redocly's
 * built-in generators, that each compiles with its own toolchain (javac, go, php -l, python3 -m py_compile),
 * and that each calls the real server process: the models list, a chat completion and an error envelope with
 * its request id (test/spec/generated-clients/smoke.*). The toolchains are Debian packages (default-jdk-headless,
 * golang-go, php-cli with php-curl, python3-httpx) that .ci/run installs; a missing one skips its language with
 * a warning, or fails the test when OMNIGATE_REQUIRE_CLIENT_TOOLCHAINS=1 (as .ci/run sets it).
 *
 * Every generator drops the request body of an operation that can answer with a stream
 * (createChatCompletion, createResponse, createMessage, createSearchAnswer): its method sends no body, so the
 * server refuses it. The smoke programs make the chat call through each client's own lower-level send instead.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { dataDir, killServers, startServer, type Started } from '../helpers/spawn-server.js';
import { listOperations, type OpenApiDocument } from './check-contract.js';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const SPEC = join(ROOT, 'openapi/api.yaml');
const REDOCLY_ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

const GENERATORS = [
  { name: 'java', file: 'Client.java' },
  { name: 'python', file: 'client.py' },
  { name: 'go', file: 'client.go' },
  { name: 'php', file: 'client.php' },
] as const;

function commandExists(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const hasJavac = commandExists('javac', ['-version']);
const hasGo = commandExists('go', ['version']);
const hasPhp = commandExists('php', ['-r', 'exit(function_exists("curl_init") ? 0 : 1);']);
/** The generated Python client needs httpx: the first interpreter that has it (Debian's, when pyenv's has not). */
const python = ['python3', '/usr/bin/python3'].find((command) => commandExists(command, ['-c', 'import httpx']));
const requireToolchains = process.env.OMNIGATE_REQUIRE_CLIENT_TOOLCHAINS === '1';
const SMOKE = join(ROOT, 'test/spec/generated-clients');
const KEY = 'og-generated-clients-smoke-key-0123456789';

const operationIds = listOperations(parse(readFileSync(SPEC, 'utf8')) as OpenApiDocument).map(
  (entry) => entry.operation.operationId as string,
);

let workDirectory: string;
let generation: { exitCode: number; output: string };

beforeAll(async () => {
  workDirectory = mkdtempSync(join(tmpdir(), 'omnigate-clients-'));
  // One run with the flag repeated (the CLI's way to run several generators): each run is mostly start-up
  // and spec parsing, so four separate processes cost about four times the CPU on a busy 2-vCPU machine.
  const args = ['--no', 'redocly', 'generate-client', SPEC, ...GENERATORS.flatMap(({ name }) => ['--generator', name])];
  args.push('-o', join(workDirectory, 'client.ts'));
  try {
    const { stdout, stderr } = await run('npx', args, { cwd: ROOT, env: REDOCLY_ENV, timeout: 45_000 });
    generation = { exitCode: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string; message: string };
    generation = {
      exitCode: typeof failure.code === 'number' ? failure.code : -1,
      output: `${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`,
    };
  }
}, 50_000);

afterAll(() => {
  rmSync(workDirectory, { recursive: true, force: true });
});

describe('redocly generate-client', () => {
  it('exits 0', () => {
    expect(generation.exitCode, generation.output).toBe(0);
  });

  it.each(GENERATORS)('generates a $name client with every operation', ({ name, file }) => {
    expect(readdirSync(workDirectory)).toContain(file);
    const path = join(workDirectory, file);
    expect(statSync(path).size).toBeGreaterThan(10_000);
    // Generators rename operations to their language's casing (createChatCompletion, create_chat_completion,
    // CreateChatCompletion); compare without case and underscores.
    const source = readFileSync(path, 'utf8').toLowerCase().replace(/_/g, '');
    const missing = operationIds.filter((id) => !source.includes(id.toLowerCase()));
    expect(missing, `operations missing from the ${name} client`).toEqual([]);
  });

  it.skipIf(!python)('generates Python that byte-compiles', async () => {
    await run(python as string, ['-m', 'py_compile', join(workDirectory, 'client.py')], { timeout: 20_000 });
  });
});

describe('each generated client against the real server', () => {
  let server: Started;
  let url: string;
  let expectedModels: string[];
  beforeAll(async () => {
    server = await startServer({ OMNIGATE_DATA_DIR: dataDir(), OMNIGATE_API_KEYS: KEY });
    url = `http://127.0.0.1:${server.port}`;
    const list = (await (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
      data: Array<{ id: string }>;
    };
    expectedModels = list.data.map((model) => model.id);
  }, 120_000);
  afterAll(() => killServers());

  const env = () => ({ ...process.env, OMNIGATE_URL: url, OMNIGATE_KEY: KEY, CLIENT_DIR: workDirectory });
  /** The smoke program's one JSON line: what it got from each call. */
  function check(stdout: string, language: string): void {
    const line = stdout.split('\n').find((text) => text.startsWith('{"'));
    expect(line, stdout).toBeDefined();
    const result = JSON.parse(line as string) as { models: string[]; chat: unknown; error: Record<string, unknown> };
    expect(result.models).toEqual(expectedModels);
    // The built-in chat model answers with what it was told, so the answer proves the body arrived.
    expect(JSON.stringify(result.chat)).toContain(`Hello from ${language}`);
    const code = result.error.code ?? (result.error.body as { error?: { code?: string } } | undefined)?.error?.code;
    expect(result.error.status).toBe(401);
    expect(code).toBe('invalid_api_key');
    expect(result.error.requestId).toMatch(/^req_[0-9a-f]{32}$/);
  }
  const toolchain = (present: boolean, name: string) => {
    if (!present && requireToolchains) {
      throw new Error(`OMNIGATE_REQUIRE_CLIENT_TOOLCHAINS=1 but ${name} is not installed`);
    }
    if (!present) {
      console.warn(`generated-clients: skipping the ${name} client's calls: its toolchain is not installed.`);
    }
    return !present;
  };

  it.skipIf(toolchain(Boolean(python), 'Python (python3 with httpx)'))(
    'Python',
    async () => {
      const { stdout } = await run(python as string, [join(SMOKE, 'smoke.py')], { env: env(), timeout: 60_000 });
      check(stdout, 'Python');
    },
    70_000,
  );

  it.skipIf(toolchain(hasGo, 'Go'))(
    'Go: builds, vets and calls',
    async () => {
      const module = join(workDirectory, 'go');
      mkdirSync(module, { recursive: true });
      copyFileSync(join(workDirectory, 'client.go'), join(module, 'client.go'));
      copyFileSync(join(SMOKE, 'smoke_test.go'), join(module, 'smoke_test.go'));
      writeFileSync(join(module, 'go.mod'), 'module omnigateclient\n\ngo 1.19\n');
      const goEnv = { ...env(), GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', GOPROXY: 'off' };
      await run('go', ['vet', '.'], { cwd: module, env: goEnv, timeout: 240_000 });
      const { stdout } = await run('go', ['test', '-count=1', '-v', '-run', 'TestSmoke', '.'], {
        cwd: module,
        env: goEnv,
        timeout: 240_000,
      });
      check(stdout, 'Go');
    },
    500_000,
  );

  it.skipIf(toolchain(hasPhp, 'PHP (php-cli with php-curl)'))(
    'PHP: lints and calls',
    async () => {
      await run('php', ['-l', join(workDirectory, 'client.php')], { timeout: 30_000 });
      const { stdout } = await run('php', [join(SMOKE, 'smoke.php')], { env: env(), timeout: 60_000 });
      check(stdout, 'PHP');
    },
    100_000,
  );

  it.skipIf(toolchain(hasJavac, 'Java (javac)'))(
    'Java: compiles and calls',
    async () => {
      const classes = join(workDirectory, 'java-smoke');
      const jvmFlags = ['-J-XX:TieredStopAtLevel=1', '-J-XX:+UseSerialGC'];
      // javac is a short-lived JVM: C1-only JIT and the serial GC halve to quarter its time on 2 vCPUs, same output.
      const { stderr } = await run(
        'javac',
        [...jvmFlags, '-nowarn', '-d', classes, join(workDirectory, 'Client.java'), join(SMOKE, 'Smoke.java')],
        { timeout: 120_000 },
      );
      const compiled = readdirSync(classes, { recursive: true })
        .map(String)
        .filter((name) => name.endsWith('.class'));
      expect(compiled, stderr).toContain(join('omnigateapi', 'Client.class'));
      expect(compiled.length).toBeGreaterThan(50);
      const { stdout } = await run(
        'java',
        ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-cp', classes, 'omnigateapi.Smoke'],
        { env: env(), timeout: 60_000 },
      );
      check(stdout, 'Java');
    },
    200_000,
  );
});
