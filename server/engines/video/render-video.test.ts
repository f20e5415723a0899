import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeVideo, meanBrightness } from '../../../test/helpers/decode-video.js';
import { readMp4 } from '../../../test/helpers/mp4-boxes.js';
import { pngSize } from '../../../test/helpers/probe-media.js';
import { renderVideo, type RenderVideoInput } from './render-video.js';

let workDir = '';
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'video-test-'));
});
afterAll(() => rm(workDir, { recursive: true, force: true }));

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const render = (input: Omit<RenderVideoInput, 'workDir'>, progress?: (percent: number) => void) =>
  renderVideo({ ...input, workDir }, { progress: progress ?? (() => {}), childProcess: () => {}, part: () => {} });

describe('renderVideo with ffmpeg', () => {
  it.each([
    [320, 240, 2],
    [240, 320, 1],
    [64, 1920, 1],
    [1280, 720, 1.5],
  ])(
    'writes an H.264 High MP4 of %i×%i and %f s, moov before mdat, that decodes to its frames',
    async (width, height, seconds) => {
      const result = await render({ prompt: 'waves on the sea at dawn', seed: 1, width, height, seconds });
      expect(result.encoder).toBe('ffmpeg');
      const info = readMp4(result.video);
      expect(info.brand).toBe('isom');
      expect(info.created).toBe(0);
      expect(info.topLevel.indexOf('moov')).toBeLessThan(info.topLevel.indexOf('mdat'));
      expect(info.topLevel.indexOf('moov')).toBeGreaterThan(-1);
      expect(Math.abs(info.seconds - seconds)).toBeLessThan(0.05);
      expect(info.tracks).toEqual([{ width, height, sampleEntry: 'avc1', avcProfile: 100 }]);
      const decoded = await decodeVideo(result.video, width, height);
      expect(decoded.frames).toHaveLength(Math.round(seconds * 24));
      expect(result).toMatchObject({ frames: Math.round(seconds * 24), seconds: Math.round(seconds * 24) / 24 });
      expect(pngSize(result.thumbnail)).toEqual({ width, height });
      // Writes into the work directory are cleaned up by the job itself when it succeeds.
      expect(await readdir(workDir)).toEqual([]);
    },
  );

  it('gives the same MP4 for the same prompt, seed, size and length, and another one for another seed', async () => {
    const input = { prompt: 'snow falling on a forest at night', seed: 5, width: 320, height: 180, seconds: 1 };
    const first = await render(input);
    const second = await render(input);
    expect(sha(first.video)).toBe(sha(second.video));
    expect(sha(first.thumbnail)).toBe(sha(second.thumbnail));
    const other = await render({ ...input, seed: 6 });
    expect(sha(other.video)).not.toBe(sha(first.video));
  });

  it('moves from frame to frame (the picture is animated, not a still)', async () => {
    const { video } = await render({ prompt: 'a stormy sea with rain', seed: 2, width: 320, height: 240, seconds: 1 });
    const { frames } = await decodeVideo(video, 320, 240);
    let changed = 0;
    for (let index = 0; index < frames[0].length; index += 4) {
      changed += Math.abs(frames[0][index] - frames[23][index]) > 24 ? 1 : 0;
    }
    expect(changed / (320 * 240)).toBeGreaterThan(0.02);
  });

  it('shows a night darker than a day once decoded', async () => {
    const brightness = async (prompt: string) => {
      const { video } = await render({ prompt, seed: 3, width: 320, height: 240, seconds: 1 });
      const { frames } = await decodeVideo(video, 320, 240);
      return meanBrightness(frames[12], 320, 240, 0, 0.5);
    };
    const night = await brightness('a meadow at night');
    const day = await brightness('a meadow on a sunny day');
    expect(night).toBeLessThan(60);
    expect(day).toBeGreaterThan(140);
  });

  it('reports progress as frames are handed over, rising to 100', async () => {
    const seen: number[] = [];
    await render({ prompt: 'city skyline', width: 160, height: 120, seconds: 2 }, (percent) => seen.push(percent));
    expect(seen.length).toBeGreaterThan(20);
    expect(seen.at(-1)).toBe(100);
    expect(seen.every((percent, index) => index === 0 || percent > seen[index - 1])).toBe(true);
    expect(seen.every((percent) => percent >= 0 && percent <= 100)).toBe(true);
  });

  it('starts from the input image and cross-fades into the animation', async () => {
    const red = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#e01010' } })
      .png()
      .toBuffer();
    const result = await render({
      prompt: 'a snowy night',
      seed: 1,
      width: 160,
      height: 120,
      seconds: 3,
      inputImage: new Uint8Array(red),
    });
    const { frames } = await decodeVideo(result.video, 160, 120);
    const redness = (frame: Uint8Array) => {
      let sum = 0;
      for (let index = 0; index < frame.length; index += 4) {
        sum += frame[index] - frame[index + 1];
      }
      return sum / (frame.length / 4);
    };
    expect(redness(frames[0])).toBeGreaterThan(150);
    expect(redness(frames[30])).toBeLessThan(redness(frames[0]) * 0.8);
    expect(Math.abs(redness(frames[71]))).toBeLessThan(30);
    const thumbnail = await sharp(result.thumbnail).raw().toBuffer({ resolveWithObject: true });
    expect(thumbnail.data[0]).toBeGreaterThan(200);
  });

  it('refuses an input image it cannot read with a 400 naming input_reference', async () => {
    await expect(
      render({ prompt: 'x', width: 160, height: 120, seconds: 1, inputImage: new Uint8Array([1, 2, 3]) }),
    ).rejects.toMatchObject({
      status: 400,
      param: 'input_reference',
    });
  });

  it.each([
    [{ width: 321, height: 240, seconds: 1 }, 'size'],
    [{ width: 320, height: 1922, seconds: 1 }, 'size'],
    [{ width: 0, height: 240, seconds: 1 }, 'size'],
    [{ width: 320, height: 240, seconds: 0.5 }, 'seconds'],
    [{ width: 320, height: 240, seconds: 21 }, 'seconds'],
    [{ width: 320, height: 240, seconds: Number.NaN }, 'seconds'],
  ])('refuses %o with a 400 naming %s', async (shape, param) => {
    await expect(render({ prompt: 'x', ...shape })).rejects.toMatchObject({ status: 400, param });
  });
});

describe('renderVideo without ffmpeg', () => {
  it('falls back to the WebAssembly encoder: Baseline, moov moved before mdat, decodable, deterministic', async () => {
    const input = {
      prompt: 'sunset over the ocean with boats',
      seed: 4,
      width: 320,
      height: 240,
      seconds: 2,
      ffmpeg: null,
    };
    const result = await render(input);
    expect(result.encoder).toBe('wasm');
    const info = readMp4(result.video);
    expect(info.topLevel.indexOf('moov')).toBeLessThan(info.topLevel.indexOf('mdat'));
    expect(info.tracks).toEqual([{ width: 320, height: 240, sampleEntry: 'avc1', avcProfile: 66 }]);
    expect(info.created).toBe(0); // the encoder stamps the wall clock; a second later the file would differ
    expect(Math.abs(info.seconds - 2)).toBeLessThan(0.05);
    const decoded = await decodeVideo(result.video, 320, 240);
    expect(decoded.frames).toHaveLength(48);
    // The same frames as ffmpeg's encoding, within what two lossy encoders disagree on.
    const byFfmpeg = await decodeVideo((await render({ ...input, ffmpeg: undefined })).video, 320, 240);
    expect(
      Math.abs(meanBrightness(decoded.frames[24], 320, 240) - meanBrightness(byFfmpeg.frames[24], 320, 240)),
    ).toBeLessThan(4);
    expect(sha((await render(input)).video)).toBe(sha(result.video));
  });
});
