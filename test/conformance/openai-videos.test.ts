/**
 * Conformance: the OFFICIAL `openai` SDK's videos resource against a real Omnigate server with no upstream:
 * `videos.create` (the SDK sends multipart), `retrieve` until completed, `list` with auto-pagination, and
 * `downloadContent` of the video and its thumbnail — the MP4 parsed by its boxes. The SDK has no poll helper;
 * our own client's `waitForVideo` reports progress on the way.
 */
import OpenAI, { ConflictError, NotFoundError, toFile } from 'openai';
import sharp from 'sharp';
import type { Video } from 'openai/resources/videos';
import { describe, expect, it, vi } from 'vitest';
import { createClient } from '../../client/index.js';
import { mp4Summary } from '../helpers/mp4-boxes.js';
import { pngSize } from '../helpers/probe-media.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import { openAIServer } from './start-server.js';
import { PENDING_INPUT_BLOB } from '../../server/storage/video-task-store.js';

const ctx = openAIServer();

describe('videos', () => {
  it('create → retrieve until completed → downloadContent (video and thumbnail) → list', async () => {
    const created = await ctx.client.videos.create({
      model: 'local:video' as never,
      prompt: 'a lighthouse beam sweeping through fog at night',
      seconds: '4',
      size: '720x1280',
    });
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
    await expect(ctx.client.videos.retrieve('video_00000000000000000000000000000000')).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('our client’s waitForVideo reports progress and resolves with the completed task', async () => {
    const omnigate = createClient({ baseUrl: ctx.started.baseURL, apiKey: ctx.started.key });
    const { data } = await omnigate.POST('/v1/videos', {
      body: { model: 'local:video', prompt: 'rain on a city street', seconds: '4', size: '320x240' },
    });
    const seen: number[] = [];
    const done = await omnigate.waitForVideo(data!.id, {
      intervalMs: 100,
      onProgress: (video) => seen.push(video.progress),
    });
    expect(done.status).toBe('completed');
    expect(seen.at(-1)).toBe(100);
  });
});

/** Polls with the SDK until the task is no longer queued or processing (or, with `until`, reaches that status). */
async function settle(id: string, until?: string): Promise<Video> {
  for (let i = 0; i < 1200; i += 1) {
    const video = await ctx.client.videos.retrieve(id);
    if (until ? video.status === until : video.status === 'completed' || video.status === 'failed') {
      return video;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the task ${id} did not settle`);
}

const blobCount = () => ctx.started.testApp.db.prepare<[], number>('SELECT COUNT(*) FROM blobs').pluck().get()!;

describe('videos.remix and videos.delete', () => {
  it("remix makes a new task from a completed one with the original's model, length and size; delete removes a task and its bytes", async () => {
    const original = await ctx.client.videos.create({
      model: 'local:video' as never,
      prompt: 'a red kite over the dunes',
      seconds: '4',
      size: '320x240' as never,
    });
    expect((await settle(original.id)).status).toBe('completed');

    const remix = await ctx.client.videos.remix(original.id, { prompt: 'the same kite at night' });
    assertMatchesSchema('Video', remix);
    expect(remix).toMatchObject({
      object: 'video',
      status: 'queued',
      model: 'local:video',
      seconds: '4',
      size: '320x240',
      prompt: 'the same kite at night',
      remixed_from_video_id: original.id,
    });
    expect(remix.id).not.toBe(original.id);
    expect(await settle(remix.id)).toMatchObject({ status: 'completed', remixed_from_video_id: original.id });
    expect((await ctx.client.videos.retrieve(original.id)).remixed_from_video_id).toBeNull();

    const row = (await ctx.started.testApp.videoTasks.get(
      original.id,
      (await ctx.started.testApp.keys.verify(ctx.started.key))!.id,
    ))!;
    expect(await ctx.started.testApp.blobs.get(row.videoBlob!)).toBeDefined();
    const deleted = await ctx.client.videos.delete(original.id);
    expect(deleted).toEqual({ id: original.id, object: 'video.deleted', deleted: true });
    assertMatchesSchema('VideoDeleted', deleted);
    expect(await ctx.started.testApp.blobs.get(row.videoBlob!)).toBeUndefined();
    expect(await ctx.started.testApp.blobs.get(row.thumbnailBlob!)).toBeUndefined();
    await expect(ctx.client.videos.retrieve(original.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(ctx.client.videos.delete(original.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(ctx.client.videos.remix(original.id, { prompt: 'gone' })).rejects.toBeInstanceOf(NotFoundError);
    // The remix keeps its own bytes.
    const content = await ctx.client.videos.downloadContent(remix.id);
    expect(mp4Summary(new Uint8Array(await content.arrayBuffer())).video).toMatchObject({ width: 320, height: 240 });
  });

  it("a remix gets its own copy of the original's input image", async () => {
    const png = await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .png()
      .toBuffer();
    const original = await ctx.client.videos.create({
      model: 'local:video' as never,
      prompt: 'a red field',
      seconds: '4',
      size: '320x240' as never,
      input_reference: await toFile(png, 'red.png', { type: 'image/png' }),
    });
    await settle(original.id);
    const remix = await ctx.client.videos.remix(original.id, { prompt: 'the red field at dawn' });
    const keyId = (await ctx.started.testApp.keys.verify(ctx.started.key))!.id;
    // The remix's copy is stored after its 202 (video-tasks.ts): wait for the task to hold it.
    await vi.waitFor(
      async () =>
        expect((await ctx.started.testApp.videoTasks.get(remix.id, keyId))!.inputBlob).not.toBe(PENDING_INPUT_BLOB),
      { timeout: 20_000 },
    );
    const [originalRow, remixRow] = (
      await Promise.all([original.id, remix.id].map((id) => ctx.started.testApp.videoTasks.get(id, keyId)))
    ).map((row) => row!);
    expect(originalRow.inputBlob).not.toBeNull();
    expect(remixRow.inputBlob).not.toBeNull();
    expect(remixRow.inputBlob).not.toBe(originalRow.inputBlob);
    await ctx.client.videos.delete(original.id);
    expect(await ctx.started.testApp.blobs.get(originalRow.inputBlob!)).toBeUndefined();
    expect(await ctx.started.testApp.blobs.get(remixRow.inputBlob!)).toBeDefined();
    expect((await settle(remix.id)).status).toBe('completed');
  });

  it("another key's task is a 404 for delete and remix, and stays", async () => {
    const mine = await ctx.client.videos.create({
      model: 'local:video' as never,
      prompt: 'mine',
      seconds: '4',
      size: '320x240' as never,
    });
    await settle(mine.id);
    const other = new OpenAI({
      apiKey: (await ctx.started.testApp.keys.create({ name: 'other' })).key,
      baseURL: `${ctx.started.baseURL}/v1`,
      maxRetries: 0,
    });
    await expect(other.videos.delete(mine.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.videos.remix(mine.id, { prompt: 'theirs' })).rejects.toBeInstanceOf(NotFoundError);
    expect((await ctx.client.videos.retrieve(mine.id)).status).toBe('completed');
  });

  it('a queued task cannot be remixed (409), and deleting a rendering task cancels it and keeps nothing it made', async () => {
    const before = blobCount();
    const long = await ctx.client.videos.create({
      model: 'local:video' as never,
      prompt: 'a slow pan across a harbour at dusk',
      seconds: '12',
      size: '1280x720' as never,
    });
    const queued = await ctx.client.videos.create({
      model: 'local:video' as never,
      prompt: 'waits behind it',
      seconds: '4',
      size: '320x240' as never,
    });
    await expect(ctx.client.videos.remix(queued.id, { prompt: 'x' })).rejects.toBeInstanceOf(ConflictError);
    await settle(long.id, 'processing');
    expect(await ctx.client.videos.delete(long.id)).toEqual({ id: long.id, object: 'video.deleted', deleted: true });
    await expect(ctx.client.videos.retrieve(long.id)).rejects.toBeInstanceOf(NotFoundError);
    // The next task completes, so the runner is free again: the deleted one was stopped, not finished.
    expect((await settle(queued.id)).status).toBe('completed');
    const stopped = ctx.started.testApp.logs.filter((line) => line.videoId === long.id);
    expect(stopped.map((line) => line.msg)).toContain('video task deleted while it rendered; render stopped');
    expect(stopped.map((line) => line.msg)).not.toContain('video completed');
    await ctx.client.videos.delete(queued.id);
    expect(blobCount()).toBe(before);
  });
});
