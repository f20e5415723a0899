/**
 * The temp directories of `local:video` renders (ffmpeg's work files). A render removes its own directory when
 * it ends or is stopped, but a process killed with SIGKILL cannot: so each directory's name carries the pid of
 * the process that made it (`omnigate-video-<pid>-XXXXXX`), and a starting model removes those whose process
 * is gone. Directories of a live process (another gateway sharing the temp directory) are left alone.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

const PREFIX = 'omnigate-video-';
const NAME = /^omnigate-video-(\d+)-[A-Za-z0-9]{6}$/;

/** A fresh directory of this process under `root`. */
export function makeVideoTempDir(root: string): Promise<string> {
  return mkdtemp(join(root, `${PREFIX}${process.pid}-`));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the render directories under `root` whose process is dead; returns their names. */
export async function sweepStaleVideoTempDirs(root: string): Promise<string[]> {
  const names = await readdir(root).catch(() => [] as string[]);
  const stale = names.filter((name) => {
    const pid = NAME.exec(name)?.[1];
    return pid !== undefined && Number(pid) !== process.pid && !isAlive(Number(pid));
  });
  await Promise.all(stale.map((name) => rm(join(root, name), { recursive: true, force: true })));
  return stale;
}
