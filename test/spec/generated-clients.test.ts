/**
 * Proves that clients in other languages can be generated from openapi/api.yaml, offline, with Redocly's
 * built-in generators, and that the Java one compiles. Python must at least byte-compile (its runtime needs
 * httpx, which is not installed here); Go and PHP toolchains are not installed, so their output is only
 * checked for presence and coverage.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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
const hasPython = commandExists('python3', ['--version']);

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

  it.skipIf(!hasPython)('generates Python that byte-compiles', async () => {
    await run('python3', ['-m', 'py_compile', join(workDirectory, 'client.py')], { timeout: 20_000 });
  });

  if (!hasJavac) {
    console.warn('generated-clients: skipping the javac compile of the Java client because no JDK (javac) is installed.');
  }
  it.skipIf(!hasJavac)(
    'generates Java that compiles with javac',
    async () => {
      const classes = join(workDirectory, 'java-classes');
      // javac is a short-lived JVM: C1-only JIT and the serial GC halve to quarter its time on 2 vCPUs, same output.
      const jvmFlags = ['-J-XX:TieredStopAtLevel=1', '-J-XX:+UseSerialGC'];
      const { stderr } = await run('javac', [...jvmFlags, '-nowarn', '-d', classes, join(workDirectory, 'Client.java')], { timeout: 40_000 });
      const compiled = readdirSync(classes, { recursive: true }).map(String).filter((name) => name.endsWith('.class'));
      expect(compiled, stderr).toContain(join('omnigateapi', 'Client.class'));
      expect(compiled.length).toBeGreaterThan(50);
    },
    45_000,
  );
});
