/**
 * The main thread never loads gpt-tokenizer (about 66 MiB and 170 ms of blocking): only the encoder thread
 * does. A fresh process imports the app and the tokenizer, counts, and lists every module its main thread
 * resolved, through the loader hooks of test/helpers/record-imports.mjs (hooks see the registering thread's
 * imports, not a worker's) and the CommonJS cache. It must also exit by itself: the encoder thread it started
 * may not keep it alive.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

const probe = `
import { createRequire } from 'node:module';
await import('./server/app.ts');
const tokens = await import('./server/tokens/tokenizer.ts');
const count = await tokens.countTextTokens('hello world');
const pieces = await tokens.splitIntoTokens('hello world');
process.stdout.write(JSON.stringify({ count, pieces, required: Object.keys(createRequire(import.meta.url).cache) }));
`;

function runProbe(): Promise<{ count: number; pieces: string[]; modules: string[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-imports-'));
  const log = path.join(dir, 'imports.log');
  const args = ['--import', 'tsx', '--import', './test/helpers/record-imports.mjs', '--input-type=module', '-e', probe];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { cwd: root, timeout: 20_000, env: { ...process.env, RECORD_IMPORTS_TO: log } },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`probe failed (${error.signal ?? error.code}): ${stderr}`));
        } else {
          const { count, pieces, required } = JSON.parse(stdout) as {
            count: number;
            pieces: string[];
            required: string[];
          };
          resolve({ count, pieces, modules: [...readFileSync(log, 'utf8').split('\n'), ...required] });
        }
        rmSync(dir, { recursive: true, force: true });
      },
    );
  });
}

describe('the main thread', () => {
  it('counts through the encoder thread without loading gpt-tokenizer, and exits by itself', async () => {
    const { count, pieces, modules } = await runProbe();
    expect(count).toBe(2);
    expect(pieces).toEqual(['hello', ' world']);
    // The hook saw the main thread's modules (else an empty list would prove nothing).
    expect(modules.some((url) => url.endsWith('/server/tokens/tokenizer.ts'))).toBe(true);
    expect(modules.some((url) => url.endsWith('/server/app.ts'))).toBe(true);
    expect(modules.filter((url) => url.includes('gpt-tokenizer'))).toEqual([]);
  });
});
