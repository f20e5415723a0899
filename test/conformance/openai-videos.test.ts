/**
 * Conformance: the OFFICIAL `openai` SDK's videos resource against a real Omnigate server with no upstream:
 * `videos.create` (the SDK sends multipart), `retrieve` until completed, `list` with auto-pagination, and
 * `downloadContent` of the video and its thumbnail — the MP4 parsed by its boxes. The SDK has no poll helper;
 * our own client's `waitForVideo` reports progress on the way.
 */
import { NotFoundError } from 'openai';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/index.js';
import { mp4Summary } from '../helpers/mp4-boxes.js';
import { pngSize } from '../helpers/probe-media.js';
import { openAIServer } from './start-server.js';

const ctx = openAIServer();

describe('videos', () => {
  it('create → retrieve until completed → downloadContent (video and thumbnail) → list', async () => {
    const created = await ctx.client.videos.create({ model: 'local:video' as never, prompt: 'a lighthouse beam sweeping through fog at night', seconds: '4', size: '720x1280' });
    expect(created).toMatchObject({ object: 'video', status: 'queued', seconds: '4', size: '720x1280' });
    let video = created;
    for (let i = 0; i < 600 && video.status !== 'completed' && video.status !== 'failed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      video = await ctx.client.videos.retrieve(created.id);
    }
    expect(video.status).toBe('completed');
    const content = await ctx.client.videos.downloadContent(created.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    const summary = mp4Summary(new Uint8Array(await content.arrayBuffer()));
    expect(summary).toMatchObject({ moovBeforeMdat: true, video: { codec: 'avc1', width: 720, height: 1280 } });
    expect(summary.seconds).toBeCloseTo(4, 0);
    const thumbnail = await ctx.client.videos.downloadContent(created.id, { variant: 'thumbnail' });
    expect(pngSize(new Uint8Array(await thumbnail.arrayBuffer()))).toEqual({ width: 720, height: 1280 });
    const ids: string[] = [];
    for await (const item of ctx.client.videos.list({ limit: 1 })) {
      ids.push(item.id);
    }
    expect(ids).toContain(created.id);
  });

  it('an unknown id is the SDK’s NotFoundError', async () => {
    await expect(ctx.client.videos.retrieve('video_00000000000000000000000000000000')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('our client’s waitForVideo reports progress and resolves with the completed task', async () => {
    const omnigate = createClient({ baseUrl: ctx.started.baseURL, apiKey: ctx.started.key });
    const { data } = await omnigate.POST('/v1/videos', { body: { model: 'local:video', prompt: 'rain on a city street', seconds: '4', size: '320x240' } });
    const seen: number[] = [];
    const done = await omnigate.waitForVideo(data!.id, { intervalMs: 100, onProgress: (video) => seen.push(video.progress) });
    expect(done.status).toBe('completed');
    expect(seen.at(-1)).toBe(100);
  });
});
