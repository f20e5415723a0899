/**
 * How long a caller's audio is, and whether it decodes at all, by decoding it with the ffmpeg binary the
 * speech and music engines use (`@ffmpeg-installer` ships ffmpeg, no ffprobe). A container's header may lie or
 * say nothing (a browser's WebM recording has no duration), so the audio is decoded — to 8 kHz mono, counted,
 * never kept — and the decode stops just past `maxSeconds`: a file longer than the limit costs no more than the
 * limit. The bytes go to a temporary file rather than a pipe because an M4A whose index sits at the end
 * cannot be read from a pipe. A child process: the event loop only counts bytes.
 *
 * `convertAudio` re-encodes to a container an upstream takes, the same way.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AudioContainer } from '../../core/models.js';
import { runFfmpeg } from './ffmpeg-process.js';

const PROBE_RATE = 8_000;
const STDERR_TAIL_BYTES = 2_048;

/** ffmpeg's demuxer name per container; `-f` saves it guessing from bytes we already recognised. */
const DEMUXERS: Record<AudioContainer, string> = {
  wav: 'wav',
  mp3: 'mp3',
  ogg: 'ogg',
  flac: 'flac',
  webm: 'matroska,webm',
  mp4: 'mov,mp4,m4a,3gp,3g2,mj2',
  aac: 'aac',
};

/** How each container is written when an upstream needs it: codec arguments and the muxer. */
const ENCODINGS: Record<AudioContainer, string[]> = {
  wav: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  mp3: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'],
  ogg: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'ogg'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
  webm: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'webm'],
  mp4: ['-c:a', 'aac', '-b:a', '64k', '-movflags', '+frag_keyframe+empty_moov', '-f', 'mp4'],
  aac: ['-c:a', 'aac', '-b:a', '64k', '-f', 'adts'],
};

async function withTempFile<T>(bytes: Uint8Array, run: (path: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), 'omnigate-audio-'));
  try {
    const path = join(directory, 'input');
    await writeFile(path, bytes);
    return await run(path);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export type AudioProbe = { seconds: number; tooLong: boolean } | { undecodable: string };

/** Decodes up to `maxSeconds` (plus a little) of the audio; `tooLong` when there was more. */
export function probeAudioDuration(
  ffmpeg: string,
  bytes: Uint8Array,
  container: AudioContainer,
  maxSeconds: number,
  signal: AbortSignal,
): Promise<AudioProbe> {
  return withTempFile(
    bytes,
    (path) =>
      new Promise<AudioProbe>((resolve, reject) => {
        signal.throwIfAborted();
        const child = spawn(
          ffmpeg,
          [
            ...['-hide_banner', '-nostdin', '-loglevel', 'error', '-f', DEMUXERS[container], '-i', path],
            ...['-map', '0:a:0', '-t', String(maxSeconds + 1), '-ac', '1', '-ar', String(PROBE_RATE)],
            ...['-f', 's16le', 'pipe:1'],
          ],
          { stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' },
        );
        let samples = 0;
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => {
          samples += chunk.length / 2;
        });
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', (chunk: string) => {
          stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
        });
        child.on('error', (error) => reject(signal.aborted ? signal.reason : error));
        child.on('close', (code) => {
          if (signal.aborted) {
            reject(signal.reason);
            return;
          }
          const seconds = samples / PROBE_RATE;
          if (code !== 0 || samples === 0) {
            resolve({ undecodable: stderr.trim().split('\n').pop() || 'no audio stream' });
            return;
          }
          resolve({ seconds, tooLong: seconds > maxSeconds });
        });
      }),
  );
}

/** The audio re-encoded as `to` (mono keeps speech intact and halves what is sent). */
export function convertAudio(
  ffmpeg: string,
  bytes: Uint8Array,
  from: AudioContainer,
  to: AudioContainer,
  signal: AbortSignal,
): Promise<Uint8Array> {
  return withTempFile(bytes, (path) =>
    runFfmpeg(
      ffmpeg,
      ['-f', DEMUXERS[from], '-i', path, '-map', '0:a:0', '-ac', '1', ...ENCODINGS[to], 'pipe:1'],
      new Uint8Array(),
      signal,
    ),
  );
}
