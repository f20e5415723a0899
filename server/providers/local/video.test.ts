import { mkdtempSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, ffmpegChildren } from '../../../test/helpers/child-processes.js';
import { decodeVideo } from '../../../test/helpers/decode-video.js';
import { readMp4 } from '../../../test/helpers/mp4-boxes.js';
import { pngSize } from '../../../test/helpers/probe-media.js';
import type { VideoCallOptions, VideoTaskContext } from '../../core/models.js';
import { createMediaPool } from '../../engines/media-pool.js';
import { createLocalVideoModel } from './video.js';

const pool = createMediaPool({ workers: 1, queueLimit: 4, jobTimeoutMs: 60_000 });
/** Made before the models that use it are created (describe time), so synchronously. */
const tempRoot = mkdtempSync(join(tmpdir(), 'local-video-test-'));
afterAll(async () => {
  await pool.close();
  await rm(tempRoot, { recursive: true, force: true });
});

function context(signal = new AbortController().signal): VideoTaskContext & { seen: number[] } {
  const seen: number[] = [];
  let checkpoint: string | undefined;
  return {
    signal,
    requestId: 'req_test',
    warn: () => {},
    progress: (percent) => seen.push(percent),
    checkpoint: { get: () => checkpoint, set: (value) => (checkpoint = value) },
    seen,
  };
}

const options = (overrides: Partial<VideoCallOptions> = {}): VideoCallOptions => ({
  prompt: 'a lighthouse by the sea at night',
  seconds: 2,
  width: 320,
  height: 240,
  ...overrides,
});

describe('local:video through the media pool', () => {
  const model = createLocalVideoModel(pool, { tempRoot });

  it('renders an MP4 and a PNG thumbnail in a worker, reporting progress up to 100, and counts seconds', async () => {
    const task = context();
    const result = await model.generate(options(), task);
    expect(result.video.mediaType).toBe('video/mp4');
    expect(result.thumbnail?.mediaType).toBe('image/png');
    expect(pngSize(result.thumbnail!.data)).toEqual({ width: 320, height: 240 });
    const info = readMp4(result.video.data);
    expect(info.topLevel.indexOf('moov')).toBeLessThan(info.topLevel.indexOf('mdat'));
    expect(info.tracks[0]).toMatchObject({ width: 320, height: 240, avcProfile: 100 });
    expect((await decodeVideo(result.video.data, 320, 240)).frames).toHaveLength(48);
    expect(result.usage).toEqual({ seconds: 2 });
    expect(task.seen.at(-1)).toBe(100);
    expect(task.seen.every((percent, index) => index === 0 || percent > task.seen[index - 1])).toBe(true);
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('takes an input image as the first frames’ backdrop', async () => {
    const blue = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#1030f0' } })
      .jpeg()
      .toBuffer();
    const result = await model.generate(
      options({ seconds: 1, inputImage: { data: new Uint8Array(blue), mediaType: 'image/jpeg' } }),
      context(),
    );
    const { data } = await sharp(result.thumbnail!.data).raw().toBuffer({ resolveWithObject: true });
    expect(data[2] - data[0]).toBeGreaterThan(150);
  });

  it('refuses a size or length it cannot render at once, before any task is queued', () => {
    expect(() => model.check!(options({ width: 1921 }))).toThrow(
      expect.objectContaining({ status: 400, param: 'size' }),
    );
    expect(() => model.check!(options({ width: 2000, height: 2000 }))).toThrow(
      expect.objectContaining({ status: 400, param: 'size' }),
    );
    expect(() => model.check!(options({ seconds: 25 }))).toThrow(
      expect.objectContaining({ status: 400, param: 'seconds' }),
    );
    expect(() => model.check!(options({ width: 1920, height: 1080, seconds: 20 }))).not.toThrow();
  });

  it('also refuses them in generate, without holding a slot', async () => {
    await expect(model.generate(options({ seconds: 0 }), context())).rejects.toMatchObject({
      status: 400,
      param: 'seconds',
    });
  });

  it('stops a render mid-way: the ffmpeg it started is killed and its temp files are gone', async () => {
    const controller = new AbortController();
    const task = context(controller.signal);
    const rendering = model.generate(
      options({ width: 1920, height: 1080, seconds: 20, prompt: 'a snowstorm in the mountains' }),
      task,
    );
    const deadline = Date.now() + 15_000;
    while ((task.seen.length === 0 || (await ffmpegChildren()).length === 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await ffmpegChildren()).toHaveLength(1);
    expect(await readdir(tempRoot)).toHaveLength(1);
    controller.abort(new Error('caller left'));
    await expect(rendering).rejects.toThrow('caller left');
    expect(task.seen.at(-1)).toBeLessThan(100);
    expect(await eventually(async () => (await ffmpegChildren()).length === 0)).toBe(true);
    expect(await eventually(async () => (await readdir(tempRoot)).length === 0)).toBe(true);
    // The slot is free again and a fresh worker renders the next video.
    await expect(model.generate(options({ seconds: 1 }), context())).resolves.toMatchObject({ usage: { seconds: 1 } });
  });

  it('falls back to the WebAssembly encoder where there is no ffmpeg', async () => {
    const wasm = createLocalVideoModel(pool, { ffmpeg: null, tempRoot });
    const result = await wasm.generate(options({ seconds: 1 }), context());
    const info = readMp4(result.video.data);
    expect(info.tracks[0]).toMatchObject({ sampleEntry: 'avc1', avcProfile: 66 });
    expect(info.topLevel.indexOf('moov')).toBeLessThan(info.topLevel.indexOf('mdat'));
    expect((await decodeVideo(result.video.data, 320, 240)).frames).toHaveLength(24);
  });

  it('names itself local / video', () => {
    expect([model.provider, model.modelId]).toEqual(['local', 'video']);
  });
});
