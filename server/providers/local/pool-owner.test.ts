/**
 * Every built-in media model queues its generation under the caller's key (`context.owner`): with the key's one
 * place in the pool already taken, each is refused with 429 `key_jobs_limit` before any worker starts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CallContext } from '../../core/call-context.js';
import type { VideoTaskContext } from '../../core/models.js';
import { createMediaPool, type MediaPool } from '../../engines/media-pool.js';
import { createLocalImageModel } from './image.js';
import { createLocalMusicModel } from './music.js';
import { createLocalSpeechModel } from './speech.js';
import { createLocalVideoModel } from './video.js';

let pool: MediaPool | undefined;
let release = () => {};

afterEach(async () => {
  release();
  await pool?.close();
});

/** A pool of two slots whose key `key_full` already has its one place, held by a job that never starts a worker. */
function poolWithFullKey(): MediaPool {
  pool = createMediaPool({ workers: 2, queueLimit: 4, perKeyLimit: 1, jobTimeoutMs: 60_000 });
  void pool.use(new AbortController().signal, () => new Promise<void>((resolve) => (release = resolve)), {
    owner: 'key_full',
  });
  return pool;
}

const context = (owner: string): CallContext & VideoTaskContext => ({
  signal: new AbortController().signal,
  requestId: 'req_1',
  owner,
  warn: () => undefined,
  progress: () => undefined,
  checkpoint: { get: () => undefined, set: () => undefined },
});

const capped = { status: 429, code: 'key_jobs_limit' };

describe('built-in media models and the per-key cap', () => {
  it('image, speech, music and video are refused for a key at its cap', async () => {
    const pool = poolWithFullKey();
    await expect(
      createLocalImageModel(pool).generate(
        { prompt: 'dunes', n: 1, width: 64, height: 64, outputFormat: 'png' },
        context('key_full'),
      ),
    ).rejects.toMatchObject(capped);
    const speech = createLocalSpeechModel(pool);
    await expect(
      speech.synthesize(
        { input: 'hello', voice: 'alloy', format: 'wav', speed: 1, volume: 1, pitch: 0, language: 'en' },
        context('key_full'),
      ),
    ).rejects.toMatchObject(capped);
    await expect(
      createLocalMusicModel(pool).compose(
        { prompt: 'calm piano', instrumental: true, durationSeconds: 1, format: 'wav' },
        context('key_full'),
      ),
    ).rejects.toMatchObject(capped);
    await expect(
      createLocalVideoModel(pool).generate({ prompt: 'waves', seconds: 1, width: 64, height: 64 }, context('key_full')),
    ).rejects.toMatchObject(capped);
    speech.close?.();
  });
});
