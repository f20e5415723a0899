import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, ffmpegChildren } from '../../../test/helpers/child-processes.js';
import { processCpuMs } from '../../../test/helpers/cpu-time.js';
import { probeAudio } from '../../../test/helpers/probe-audio.js';
import { createMediaPool } from '../media-pool.js';
import { audioEncoders, encodeAudio, PCM_OUTPUT_RATE, type AudioFormat } from './encode-audio.js';
import type { Pcm } from './pcm.js';

const pool = createMediaPool({ workers: 1, queueLimit: 4, jobTimeoutMs: 60_000 });
afterAll(() => pool.close());

/** A gliding tone, so every codec has something real to encode; stereo has a different tone per side. */
function tone(seconds: number, sampleRate: number, channels: 1 | 2): Pcm {
  const frames = Math.round(seconds * sampleRate);
  const samples = new Int16Array(frames * channels);
  for (let i = 0; i < frames; i += 1) {
    const t = i / sampleRate;
    for (let c = 0; c < channels; c += 1) {
      samples[i * channels + c] = Math.round(12_000 * Math.sin(2 * Math.PI * (220 * (c + 1) + 40 * t) * t));
    }
  }
  return { samples, sampleRate, channels };
}

const EXTENSION: Record<AudioFormat, string> = {
  mp3: 'mp3',
  opus: 'ogg',
  aac: 'aac',
  flac: 'flac',
  wav: 'wav',
  pcm: 'raw',
};
const withSlot = <T>(steps: Parameters<typeof pool.use<T>>[1], signal = new AbortController().signal) =>
  pool.use(signal, steps);

describe('encodeAudio', () => {
  it.each([
    ['mp3', 'mp3', 'audio/mpeg'],
    ['opus', 'opus', 'audio/ogg'],
    ['aac', 'aac', 'audio/aac'],
    ['flac', 'flac', 'audio/flac'],
  ] as const)(
    'encodes 16 kHz mono speech-rate audio as %s that decodes to the same length',
    async (format, codec, mediaType) => {
      const pcm = tone(3, 16_000, 1);
      const audio = await withSlot((slot) => encodeAudio(pcm, format, slot));
      expect(audio.mediaType).toBe(mediaType);
      const probe = await probeAudio(audio.data, EXTENSION[format]);
      expect(probe.codec).toBe(codec);
      expect(probe.channels).toBe('mono');
      expect(probe.sampleRate).toBe(format === 'opus' ? 48_000 : 16_000);
      expect(probe.decodedSeconds).toBeGreaterThan(2.95);
      expect(probe.decodedSeconds).toBeLessThan(3.1);
      if (format !== 'aac') {
        // ADTS has no length field, so its Duration is an estimate from the bit rate.
        // MP3 adds up to two frames of encoder delay and padding (72 ms each at 16 kHz).
        expect(Math.abs(probe.headerSeconds! - 3)).toBeLessThan(0.15);
      }
    },
  );

  it.each(['mp3', 'opus', 'flac', 'wav'] as const)('keeps 44.1 kHz stereo music stereo in %s', async (format) => {
    const audio = await withSlot((slot) => encodeAudio(tone(2, 44_100, 2), format, slot));
    const probe = await probeAudio(audio.data, EXTENSION[format]);
    expect(probe.channels).toBe('stereo');
    expect(probe.sampleRate).toBe(format === 'opus' ? 48_000 : 44_100);
    expect(probe.decodedSeconds).toBeGreaterThan(1.95);
    expect(probe.decodedSeconds).toBeLessThan(2.1);
  });

  it('writes a WAV whose header describes its samples exactly, the same bytes every time', async () => {
    const pcm = tone(1.5, 22_050, 1);
    const first = await withSlot((slot) => encodeAudio(pcm, 'wav', slot));
    const second = await withSlot((slot) => encodeAudio(pcm, 'wav', slot));
    const view = new DataView(first.data.buffer, first.data.byteOffset);
    expect(String.fromCharCode(...first.data.subarray(0, 4), ...first.data.subarray(8, 12))).toBe('RIFFWAVE');
    expect(view.getUint16(20, true)).toBe(1);
    expect(view.getUint16(22, true)).toBe(1);
    expect(view.getUint32(24, true)).toBe(22_050);
    expect(view.getUint16(34, true)).toBe(16);
    expect(view.getUint32(40, true)).toBe(pcm.samples.length * 2);
    expect(view.getUint32(4, true)).toBe(first.data.length - 8);
    const hash = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    expect(hash(first.data)).toBe(hash(second.data));
  });

  it.each([
    ['ffmpeg', undefined],
    ['JS', null],
  ] as const)(
    'produces OpenAI pcm (24 kHz mono s16le) from 16 kHz mono and 44.1 kHz stereo with %s',
    async (_by, ffmpeg) => {
      for (const pcm of [tone(2, 16_000, 1), tone(2, 44_100, 2)]) {
        const audio = await withSlot((slot) => encodeAudio(pcm, 'pcm', slot, { ffmpeg }));
        expect(audio.mediaType).toBe('audio/pcm');
        expect(Math.abs(audio.data.length - PCM_OUTPUT_RATE * 2 * 2)).toBeLessThanOrEqual(2 * 64);
        const samples = new Int16Array(audio.data.buffer, audio.data.byteOffset, audio.data.length / 2);
        expect(Math.max(...samples.subarray(0, 24_000))).toBeGreaterThan(5_000);
      }
    },
  );

  it('falls back to LAME in the pool when there is no ffmpeg, and the mp3 decodes', async () => {
    expect(audioEncoders({ ffmpeg: null }).formats).toEqual(['mp3', 'wav', 'pcm']);
    for (const pcm of [tone(2, 16_000, 1), tone(1, 44_100, 2)]) {
      const audio = await withSlot((slot) => encodeAudio(pcm, 'mp3', slot, { ffmpeg: null }));
      const probe = await probeAudio(audio.data, 'mp3');
      expect(probe.codec).toBe('mp3');
      expect(probe.sampleRate).toBe(pcm.sampleRate);
      expect(probe.channels).toBe(pcm.channels === 2 ? 'stereo' : 'mono');
      expect(Math.abs(probe.decodedSeconds - pcm.samples.length / pcm.channels / pcm.sampleRate)).toBeLessThan(0.15);
    }
  });

  it.each(['opus', 'aac', 'flac'] as const)(
    'refuses %s with a 400 naming the formats it can make when there is no ffmpeg',
    async (format) => {
      await expect(
        withSlot((slot) => encodeAudio(tone(0.5, 16_000, 1), format, slot, { ffmpeg: null })),
      ).rejects.toMatchObject({
        status: 400,
        param: 'response_format',
        message: expect.stringContaining('mp3, wav, pcm'),
      });
    },
  );

  it('kills ffmpeg when the generation is stopped mid-encode', async () => {
    // Five minutes of stereo noise: several seconds of opus work, and quick to make.
    const samples = new Int16Array(300 * 48_000 * 2);
    let state = 1;
    for (let i = 0; i < samples.length; i += 1) {
      state = (state * 1_103_515_245 + 12_345) & 0x7fff_ffff;
      samples[i] = (state >> 15) - 32_768;
    }
    const long: Pcm = { samples, sampleRate: 48_000, channels: 2 };
    const controller = new AbortController();
    const encoding = withSlot((slot) => encodeAudio(long, 'opus', slot), controller.signal);
    expect(await eventually(async () => (await ffmpegChildren()).length === 1)).toBe(true);
    const [pid] = await ffmpegChildren();
    // ffmpeg's own CPU time from the abort to its end, not wall time: left running, it would go on to seconds of
    // opus work however busy the machine is. Its last reading is taken while it is still alive.
    const atAbort = processCpuMs(pid);
    let lastCpuMs = atAbort;
    controller.abort(new Error('caller left'));
    await expect(encoding).rejects.toThrow('caller left');
    const ended = await eventually(async () => {
      try {
        lastCpuMs = processCpuMs(pid);
      } catch {
        return true; // gone from /proc
      }
      return !(await ffmpegChildren()).includes(pid);
    });
    expect(ended).toBe(true);
    expect(lastCpuMs - atAbort).toBeLessThan(500);
    expect(await ffmpegChildren()).toEqual([]);
  });

  it('puts ffmpeg’s own message into the error when it fails', async () => {
    const odd: Pcm = { samples: new Int16Array(100), sampleRate: 0, channels: 1 };
    await expect(withSlot((slot) => encodeAudio(odd, 'mp3', slot))).rejects.toMatchObject({
      status: 500,
      code: 'encoder_failed',
      message: expect.stringMatching(/ffmpeg failed \(exit \d+\): \S/),
    });
  });
});
