/**
 * Decodes audio with the ffmpeg binary the server uses, as an independent check of what an encoder produced:
 * the container's own claims (`Duration:` and the `Audio:` stream line, as ffmpeg prints them) and the length
 * of the audio it really decodes to.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPath } from '../../server/engines/audio/ffmpeg-process.js';

export interface AudioProbe {
  codec: string;
  sampleRate: number;
  channels: string;
  /** `Duration:` in seconds, undefined when ffmpeg prints N/A. */
  headerSeconds: number | undefined;
  /** Seconds of audio it decodes to. */
  decodedSeconds: number;
}

/** `extension` names the container for ffmpeg; `pcm` is read as OpenAI's raw format (s16le mono 24 kHz). */
export async function probeAudio(file: Uint8Array, extension: string): Promise<AudioProbe> {
  const ffmpeg = ffmpegPath();
  if (!ffmpeg) {
    throw new Error('the probe needs the ffmpeg binary');
  }
  const directory = await mkdtemp(join(tmpdir(), 'probe-audio-'));
  try {
    const path = join(directory, `audio.${extension}`);
    await writeFile(path, file);
    const { stdout, stderr } = await new Promise<{ stdout: Buffer; stderr: string }>((resolve, reject) => {
      const raw = extension === 'pcm' ? ['-f', 's16le', '-ar', '24000', '-ac', '1'] : [];
      execFile(
        ffmpeg,
        ['-hide_banner', ...raw, '-i', path, '-f', 's16le', '-ac', '1', '-ar', '8000', 'pipe:1'],
        { encoding: 'buffer', maxBuffer: 64 << 20 },
        (error, out, err) =>
          error
            ? reject(new Error(`${error.message}\n${err.toString()}`))
            : resolve({ stdout: out, stderr: err.toString() }),
      );
    });
    const stream = /Stream #0:0.*?Audio: (\w+).*?, (\d+) Hz, (\w+)/.exec(stderr);
    if (!stream) {
      throw new Error(`no audio stream in:\n${stderr}`);
    }
    const duration = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(stderr);
    return {
      codec: stream[1],
      sampleRate: Number(stream[2]),
      channels: stream[3],
      headerSeconds: duration ? Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]) : undefined,
      decodedSeconds: stdout.length / 2 / 8000,
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
