/**
 * No key can take the video queue: past `OMNIGATE_VIDEO_TASKS_PER_KEY` a key's create is a 429 with
 * Retry-After (REST and the MCP `create_video` tool alike) while other keys are still served, and the runner
 * claims across keys in turn, so a key with one task waits behind at most one task of a key that queued many.
 * The runner is stopped first, so the tasks stay queued and the claim order is read from the store itself.
 */
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { mcpToolCall } from '../helpers/mcp-tool-call.js';
import type { ApiKeyRecord } from '../../server/storage/key-store.js';
import type { VideoTask } from '../../server/storage/video-task-store.js';

const CAP = 4;
const made: TestApp = await createTestApp({ videos: { maxActivePerKey: CAP } });
await made.videoRunner.stop(0);
const other = (await made.keys.create({ name: 'other' })).key;
const keyIdOf = async (secret: string): Promise<string> => ((await made.keys.verify(secret)) as ApiKeyRecord).id;

afterAll(async () => {
  await made.registry.close();
});

const create = (key: string, prompt: string) =>
  request(made.app)
    .post('/v1/videos')
    .set('authorization', `Bearer ${key}`)
    .send({ model: 'local:video', prompt, seconds: '4', size: '320x240' });

describe('the per-key cap on video tasks', () => {
  it('accepts a key’s tasks up to the cap, then answers 429 with Retry-After to 200 more; another key is still served', async () => {
    for (let n = 0; n < CAP; n++) {
      expect((await create(made.key, `flood ${n}`)).status).toBe(202);
    }
    const statuses: number[] = [];
    let last: request.Response | undefined;
    for (let n = 0; n < 200; n++) {
      last = await create(made.key, `past the cap ${n}`);
      statuses.push(last.status);
    }
    expect(new Set(statuses)).toEqual(new Set([429]));
    expectRequestId(last!);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect(last!.body.error).toMatchObject({ type: 'rate_limit_error', code: 'video_task_limit_exceeded' });
    expect(last!.body.error.message).toContain(`${CAP} video tasks`);
    expect(await made.videoTasks.activeCount(await keyIdOf(made.key))).toBe(CAP);
    expect((await create(other, 'the other key')).status).toBe(202);
  });

  it('holds for the MCP create_video tool too, which answers an isError result naming the 429', async () => {
    const result = await mcpToolCall(made.app, made.key, 'create_video', { prompt: 'through MCP', size: '320x240' });
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/429 video_task_limit_exceeded/);
    expect(await made.videoTasks.activeCount(await keyIdOf(made.key))).toBe(CAP);
  });

  it('claims round-robin: the other key’s one task comes right after the first of the flooding key’s', async () => {
    const claimed: VideoTask[] = [];
    for (let n = 0; n < 3; n++) {
      claimed.push((await made.videoTasks.claim('runner-test', Date.now(), 60_000))!);
    }
    expect(claimed.map((task) => task.prompt)).toEqual(['flood 0', 'the other key', 'flood 1']);
  });
});

describe('unknown MCP tool arguments', () => {
  it('are refused with the field named, for every tool, before the tool runs', async () => {
    const { TOOLS } = await import('../../server/tools/tool-list.js');
    const before = await made.videoTasks.activeCount(await keyIdOf(other));
    for (const tool of TOOLS) {
      const result = await mcpToolCall(made.app, other, tool.name, { no_such_argument: 1 });
      expect(result.isError, tool.name).toBe(true);
      expect(result.content[0]?.text, tool.name).toMatch(/no_such_argument/);
    }
    // create_video with a valid prompt and an unknown argument queues nothing.
    const video = await mcpToolCall(made.app, other, 'create_video', {
      prompt: 'a boat',
      size: '320x240',
      duration: 8,
    });
    expect(video.isError).toBe(true);
    expect(video.content[0]?.text).toMatch(/Unrecognized key.*duration/);
    expect(await made.videoTasks.activeCount(await keyIdOf(other))).toBe(before);
  });
});
