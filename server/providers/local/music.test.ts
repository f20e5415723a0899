import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import type { MusicCallOptions } from '../../core/models.js';
import { createMediaPool } from '../../engines/media-pool.js';
import { renderMusic } from '../../engines/music/render-music.js';
import { createLocalMusicModel } from './music.js';

const pool = createMediaPool({ workers: 1, queueLimit: 4, jobTimeoutMs: 60_000 });
const model = createLocalMusicModel(pool);
afterAll(() => pool.close());

function context(warnings: CallWarning[] = []): CallContext {
  return { signal: new AbortController().signal, requestId: 'req_test', warn: (warning) => warnings.push(warning) };
}

const options: MusicCallOptions = {
  prompt: 'lofi hip hop with rhodes, 84 BPM',
  instrumental: true,
  durationSeconds: 6,
  seed: 9,
  format: 'wav',
};

/** The fields of a canonical 44-byte RIFF/WAVE header. */
function parseWav(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = (offset: number) => new TextDecoder().decode(bytes.subarray(offset, offset + 4));
  return {
    riff: ascii(0),
    riffSize: view.getUint32(4, true),
    wave: ascii(8),
    format: view.getUint16(20, true),
    channels: view.getUint16(22, true),
    sampleRate: view.getUint32(24, true),
    bitsPerSample: view.getUint16(34, true),
    data: ascii(36),
    dataBytes: view.getUint32(40, true),
  };
}

describe('local:music through the media pool', () => {
  it('composes a WAV of exactly the requested length in a worker', async () => {
    const result = await model.compose(options, context());
    expect(result.audio.mediaType).toBe('audio/wav');
    const header = parseWav(result.audio.data);
    expect(header).toMatchObject({
      riff: 'RIFF',
      wave: 'WAVE',
      format: 1,
      channels: 2,
      sampleRate: 44_100,
      bitsPerSample: 16,
      data: 'data',
    });
    expect(header.dataBytes).toBe(6 * 44_100 * 2 * 2);
    expect(header.riffSize).toBe(36 + header.dataBytes);
    expect(result.audio.data.byteLength).toBe(44 + header.dataBytes);
    expect(result.durationSeconds).toBe(6);
    expect(result.usage).toEqual({ seconds: 6 });
  });

  it('gives the worker the same samples as a render on this thread', async () => {
    const result = await model.compose(options, context());
    const here = await renderMusic({
      prompt: options.prompt,
      durationSeconds: options.durationSeconds,
      seed: options.seed,
    });
    const hash = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    expect(hash(result.audio.data.subarray(44))).toBe(
      hash(new Uint8Array(here.samples.buffer, here.samples.byteOffset, here.samples.byteLength)),
    );
  });

  it('warns that lyrics are not sung unless the caller asked for an instrumental', async () => {
    const warnings: CallWarning[] = [];
    await model.compose(
      { ...options, durationSeconds: 2, lyrics: '[Verse]\nhello', instrumental: false },
      context(warnings),
    );
    expect(warnings).toEqual([expect.objectContaining({ field: 'lyrics' })]);
    const quiet: CallWarning[] = [];
    await model.compose(
      { ...options, durationSeconds: 2, lyrics: '[Verse]\nhello', instrumental: true },
      context(quiet),
    );
    expect(quiet).toEqual([]);
  });

  it('passes the engine’s 400 for a bad duration back from the worker', async () => {
    await expect(model.compose({ ...options, durationSeconds: 0.2 }, context())).rejects.toMatchObject({
      status: 400,
      param: 'duration',
    });
  });

  it('names itself local / music', () => {
    expect([model.provider, model.modelId]).toEqual(['local', 'music']);
  });
});
