import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeVideoTempDir, sweepStaleVideoTempDirs } from './video-temp-dirs.js';

const root = mkdtempSync(join(tmpdir(), 'video-temp-dirs-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The pid of a process that has exited (a child run to completion). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('video render temp directories', () => {
  it('are named for this process, and a sweep removes only those of dead processes', async () => {
    const mine = await makeVideoTempDir(root);
    expect(mine).toMatch(new RegExp(`omnigate-video-${process.pid}-[A-Za-z0-9]{6}$`));
    const dead = join(root, `omnigate-video-${deadPid()}-AbC123`);
    mkdirSync(join(dead, 'nested'), { recursive: true });
    writeFileSync(join(dead, 'nested', 'frames.mp4'), 'partial');
    const alive = join(root, `omnigate-video-${process.ppid}-XyZ789`); // our parent is alive
    mkdirSync(alive);
    mkdirSync(join(root, 'someone-else'));
    expect(await sweepStaleVideoTempDirs(root)).toEqual([dead.slice(root.length + 1)]);
    expect(readdirSync(root).sort()).toEqual(
      [mine.slice(root.length + 1), alive.slice(root.length + 1), 'someone-else'].sort(),
    );
  });

  it('does nothing when the directory cannot be read', async () => {
    expect(await sweepStaleVideoTempDirs(join(root, 'missing'))).toEqual([]);
  });
});
