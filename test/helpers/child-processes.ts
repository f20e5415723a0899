/** The live (not zombie) ffmpeg processes this process started, read from /proc, and a wait for a condition. */
import { readdir, readFile } from 'node:fs/promises';

export async function ffmpegChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const match = /^(\d+) \((.*)\) (\S) (\d+)/.exec(stat);
    if (match && match[2] === 'ffmpeg' && match[3] !== 'Z' && Number(match[4]) === process.pid) {
      found.push(Number(match[1]));
    }
  }
  return found;
}

/**
 * Polls `check` every 20 ms until it holds or `guardMs` pass, and answers whether it held. The guard is generous:
 * it only turns a condition that never comes into a failure instead of a hang, and judges no speed.
 */
export async function eventually(check: () => boolean | Promise<boolean>, guardMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + guardMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}
