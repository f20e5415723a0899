import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import type { ImageCallOptions } from '../../core/models.js';
import { createMediaPool } from '../../engines/media-pool.js';
import { createLocalImageModel } from './image.js';

const pool = createMediaPool({ workers: 1, queueLimit: 4, jobTimeoutMs: 60_000 });
afterAll(() => pool.close());

const model = createLocalImageModel(pool);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function context(signal = new AbortController().signal): CallContext & { warnings: CallWarning[] } {
  const warnings: CallWarning[] = [];
  return { signal, requestId: 'req_test', warn: (warning) => warnings.push(warning), warnings };
}

const options = (overrides: Partial<ImageCallOptions> = {}): ImageCallOptions => ({
  prompt: 'a red fox in a snowy forest at sunset',
  n: 1,
  outputFormat: 'png',
  seed: 7,
  ...overrides,
});

describe('local:image through the media pool', () => {
  it('renders n distinct images of the asked size in a worker, and counts them', async () => {
    const result = await model.generate(options({ n: 3, width: 320, height: 240, outputFormat: 'webp' }), context());
    expect(result).toMatchObject({ width: 320, height: 240, usage: { images: 3, pixels: 3 * 320 * 240 } });
    expect(result.images).toHaveLength(3);
    for (const image of result.images) {
      expect(image.mediaType).toBe('image/webp');
      expect(await sharp(image.data).metadata()).toMatchObject({ format: 'webp', width: 320, height: 240 });
    }
    expect(new Set(result.images.map((image) => sha(image.data))).size).toBe(3);
    expect(pool.stats()).toMatchObject({ busy: 0, workers: 1 });
  });

  it('draws 1024×1024 when no size is given, the same bytes each time', async () => {
    const first = await model.generate(options(), context());
    const second = await model.generate(options(), context());
    expect(first).toMatchObject({ width: 1024, height: 1024, usage: { images: 1, pixels: 1024 * 1024 } });
    expect(await sharp(first.images[0].data).metadata()).toMatchObject({ format: 'png', width: 1024, height: 1024 });
    expect(sha(second.images[0].data)).toBe(sha(first.images[0].data));
  });

  it('takes one given side for both', async () => {
    expect(await model.generate(options({ width: 200 }), context())).toMatchObject({ width: 200, height: 200 });
  });

  it('answers a size out of range with the engine’s 400', async () => {
    await expect(model.generate(options({ width: 4096, height: 4096 }), context())).rejects.toMatchObject({
      status: 400,
      param: 'size',
      code: 'invalid_size',
    });
  });

  it('warns about settings a drawn scene cannot honour', async () => {
    const call = context();
    await model.generate(options({ width: 64, background: 'transparent', style: 'vivid' }), call);
    expect(call.warnings.map((warning) => warning.field).sort()).toEqual(['background', 'style']);
  });

  it('stops when the caller goes away', async () => {
    const controller = new AbortController();
    const pending = model.generate(options({ n: 10, width: 2048, height: 2048 }), context(controller.signal));
    setTimeout(() => controller.abort(new Error('client gone')), 50);
    await expect(pending).rejects.toThrow('client gone');
  });
});
