/** The live (not zombie) child processes of this process (or another), read from /proc, and a wait for a condition. */
import { readdir, readFile } from 'node:fs/promises';

/** Pids of this process's live children whose command line contains `word` (`ffmpeg`, a module's file name). */
export function childProcesses(word: string): Promise<number[]> {
  return childrenOf(process.pid, word);
}

/** Pids of the live children of process `parent` whose command line contains `word` ('' for all). */
export async function childrenOf(parent: number, word = ''): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const match = /^(\d+) \((.*)\) (\S) (\d+)/.exec(stat);
    if (match && match[3] !== 'Z' && Number(match[4]) === parent) {
      const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
      if (commandLine.includes(word)) {
        found.push(Number(match[1]));
      }
    }
  }
  return found;
}

export function ffmpegChildren(): Promise<number[]> {
  return childProcesses('ffmpeg');
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
