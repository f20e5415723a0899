/**
 * The main thread never loads gpt-tokenizer (about 66 MiB and 170 ms of blocking): only the encoder thread
 * does. A fresh process imports the app and the tokenizer, counts, and lists every module its main thread
 * resolved, through a resolve hook (hooks registered with `module.register` see the registering thread's
 * imports, not a worker's) and the CommonJS cache. It must also exit by itself: the encoder thread it started
 * may not keep it alive.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

const probe = `
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const hooks = 'let port; export function initialize(data) { port = data.port; }' +
  'export async function resolve(specifier, context, next) { const result = await next(specifier, context); port.postMessage(result.url); return result; }';
const { port1, port2 } = new MessageChannel();
const resolved = [];
port1.on('message', (url) => resolved.push(url));
port1.unref();
register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] });
await import('./server/app.ts');
const tokens = await import('./server/tokens/tokenizer.ts');
const count = await tokens.countTextTokens('hello world');
const pieces = await tokens.splitIntoTokens('hello world');
await new Promise((resolve) => setTimeout(resolve, 100)); // the hook's last messages
const modules = [...resolved, ...Object.keys(createRequire(import.meta.url).cache)];
process.stdout.write(JSON.stringify({ count, pieces, modules }));
`;

function runProbe(): Promise<{ count: number; pieces: string[]; modules: string[] }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { cwd: root, timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`probe failed (${error.signal ?? error.code}): ${stderr}`));
      } else {
        resolve(JSON.parse(stdout));
      }
    });
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
