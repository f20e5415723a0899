/**
 * The `omnigate` command as a user runs it: the real bin file in a child process (tsx loaded by the bin itself),
 * from a folder that is not the project's.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/omnigate.mjs', import.meta.url));
const VERSION = (await import('../../package.json', { with: { type: 'json' } })).default.version;
const elsewhere = mkdtempSync(path.join(tmpdir(), 'omnigate-cli-'));

async function omnigate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      cwd: elsewhere,
      env: { PATH: process.env.PATH, OMNIGATE_DATA_DIR: path.join(elsewhere, 'data') },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('omnigate', { timeout: 60_000 }, () => {
  it('--version prints the package version', async () => {
    expect(await omnigate('--version')).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('--help lists every command', async () => {
    const { code, stdout } = await omnigate('--help');
    expect(code).toBe(0);
    for (const command of [
      'omnigate start',
      'omnigate keys create',
      'omnigate keys list',
      'omnigate keys revoke',
      'omnigate config check FILE',
    ]) {
      expect(stdout).toContain(command);
    }
  });

  it('an unknown command exits 2 with the usage', async () => {
    const { code, stderr } = await omnigate('serve');
    expect(code).toBe(2);
    expect(stderr).toContain("unknown command 'serve'");
    expect(stderr).toContain('omnigate start');
  });

  it('config check prints the effective configuration with secrets masked', async () => {
    const file = path.join(elsewhere, 'ok.yaml');
    writeFileSync(
      file,
      'providers:\n  openai:\n    type: openai-compatible\n    base_url: http://127.0.0.1:9/v1\n    api_key: sk-verysecretkey1234567890\n' +
        '    headers:\n      X-Org-Token: tok-abcdefghijkl\n      X-Team: research\nmodels:\n  - provider: openai\n    model: gpt-4o-mini\n    aliases: [fast]\n',
    );
    const { code, stdout } = await omnigate('config', 'check', file);
    expect(code).toBe(0);
    expect(stdout).toContain(`${file}: valid`);
    expect(stdout).toContain('id: openai:gpt-4o-mini');
    expect(stdout).toContain('- fast');
    expect(stdout).toContain('id: local:chat'); // built-in models are part of what takes effect
    expect(stdout).toContain('X-Team: research');
    expect(stdout).not.toContain('verysecretkey');
    expect(stdout).not.toContain('abcdefghijkl');
    // The services were built in memory: the check created no data directory.
    expect(existsSync(path.join(elsewhere, 'data'))).toBe(false);
  });

  it('config check exits 78 naming the file and the problem', async () => {
    const file = path.join(elsewhere, 'bad.yaml');
    writeFileSync(file, 'aliases:\n  fast: local:chatt\n');
    const { code, stderr } = await omnigate('config', 'check', file);
    expect(code).toBe(78);
    expect(stderr).toBe(
      `omnigate: configuration error: ${file}: aliases.fast: unknown model 'local:chatt' (configured: local:chat, local:image, local:speech, local:music, local:video, local:search, local:embed)\n`,
    );
  });

  it('keys list from another folder says where it looked instead of creating a database', async () => {
    const { code, stdout, stderr } = await omnigate('keys', 'list');
    expect(code).not.toBe(0);
    expect(`${stdout}${stderr}`).toContain(path.join(elsewhere, 'data'));
  });
});
