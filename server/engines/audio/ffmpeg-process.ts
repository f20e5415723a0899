/**
 * Runs the static ffmpeg binary from `@ffmpeg-installer/ffmpeg` as a child process: bytes in on stdin, bytes
 * out on stdout. The binary is GPLv3, so it stays a separate program we talk to through pipes, never a library
 * in our process. It is killed when the generation's signal fires (spawn's `signal` option sends SIGTERM);
 * its stderr is kept to a bounded tail, which becomes the error message when it fails.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const STDERR_TAIL_BYTES = 4_096;

let located: { path: string | undefined } | undefined;

/**
 * The binary's path, or undefined on a platform `@ffmpeg-installer` has no binary for (its index throws a
 * string then). Looked up once: the answer cannot change while the process runs.
 */
export function ffmpegPath(): string | undefined {
  if (!located) {
    try {
      const installer = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string };
      located = { path: installer.path };
    } catch {
      located = { path: undefined };
    }
  }
  return located.path;
}

/** Feeds `input` to `ffmpeg <args>` and resolves what it wrote to stdout. */
export function runFfmpeg(
  binary: string,
  args: readonly string[],
  input: Uint8Array,
  signal: AbortSignal,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const child = spawn(binary, ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      signal,
      killSignal: 'SIGKILL',
    });
    const output: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    // ffmpeg may stop reading early (bad arguments): the EPIPE that follows is not the error worth reporting.
    child.stdin.on('error', () => {});
    child.on('error', (error) => reject(signal.aborted ? signal.reason : error));
    child.on('close', (code, killedBy) => {
      if (signal.aborted) {
        reject(signal.reason);
      } else if (code === 0) {
        const bytes = Buffer.concat(output);
        resolve(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      } else {
        reject(new Error(`ffmpeg failed (${killedBy ?? `exit ${code}`}): ${stderr.trim() || 'no message'}`));
      }
    });
    child.stdin.end(input);
  });
}
