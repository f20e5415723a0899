/**
 * H.264 by the static ffmpeg binary (libx264, High profile, yuv420p, `veryfast`, CRF 23): raw RGBA frames go
 * to its stdin with backpressure, and the MP4 goes to a temp file, because `+faststart` moves the `moov` box
 * to the front by rewriting the finished file, which a pipe cannot do. The child is named to the pool
 * (`onChild`): a stopped job's worker is terminated, and a terminated thread does not end its children.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import type { FrameEncoder, FrameEncoderOptions } from './frame-encoder.js';

const STDERR_TAIL_BYTES = 4_096;

export interface FfmpegEncoderOptions extends FrameEncoderOptions {
  binary: string;
  /** Where the MP4 is written; removed by `finish` and `abort`. */
  outputPath: string;
  onChild?: (pid: number, running: boolean) => void;
}

export function startFfmpegH264(options: FfmpegEncoderOptions): FrameEncoder {
  const { width, height, fps, outputPath } = options;
  const child = spawn(
    options.binary,
    [
      ...['-hide_banner', '-nostdin', '-loglevel', 'error'],
      ...['-f', 'rawvideo', '-pix_fmt', 'rgba', '-s', `${width}x${height}`, '-framerate', String(fps), '-i', 'pipe:0'],
      ...['-c:v', 'libx264', '-profile:v', 'high', '-pix_fmt', 'yuv420p', '-preset', 'veryfast', '-crf', '23'],
      // Bit-exact muxing and no copied metadata: the same frames give the same file.
      ...['-movflags', '+faststart', '-fflags', '+bitexact', '-flags:v', '+bitexact', '-map_metadata', '-1'],
      ...['-y', outputPath],
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  if (child.pid !== undefined) {
    options.onChild?.(child.pid, true);
  }
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
  });
  let failure: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.on('error', (error) => {
      failure ??= error;
      resolve();
    });
    child.on('close', (code, killedBy) => {
      if (child.pid !== undefined) {
        options.onChild?.(child.pid, false);
      }
      if (code !== 0) {
        failure ??= new Error(`ffmpeg failed (${killedBy ?? `exit ${code}`}): ${stderr.trim() || 'no message'}`);
      }
      resolve();
    });
  });
  // ffmpeg may stop reading early (bad arguments): the EPIPE that follows is not the error worth reporting.
  child.stdin.on('error', (error) => {
    failure ??= error;
  });
  let aborted = false;
  return {
    name: 'ffmpeg',
    addFrame(rgba) {
      if (failure) {
        return Promise.reject(failure);
      }
      // The write's callback fires once the bytes are in the pipe: that is the backpressure (the next frame is
      // drawn while this one is written, into the other of two buffers), and the point the buffer is free again.
      return new Promise((resolve, reject) => {
        child.stdin.write(rgba, (error) => (error ? reject(failure ?? error) : resolve()));
      });
    },
    async finish() {
      child.stdin.end();
      await exited;
      try {
        if (failure) {
          throw failure;
        }
        return new Uint8Array(await readFile(outputPath));
      } finally {
        await rm(outputPath, { force: true });
      }
    },
    abort() {
      if (aborted) {
        return;
      }
      aborted = true;
      child.kill('SIGKILL');
      void exited.then(() => rm(outputPath, { force: true }));
    },
  };
}
