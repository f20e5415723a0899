/**
 * One store contract, two backends: every case here runs against the SQLite stores and the PostgreSQL stores
 * (each PostgreSQL case on a database of its own, dropped afterwards). Without a PostgreSQL server the
 * PostgreSQL half is skipped with a printed notice, except under CI=true, where it fails.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBlobStore } from '../../server/storage/blob-store.js';
import { openDatabase } from '../../server/storage/database.js';
import { createFileStore, INDEXING_LEASE_SECONDS } from '../../server/storage/file-store.js';
import { createKeyStore } from '../../server/storage/key-store.js';
import { createLocalKeyChangeFeed, type KeyChange } from '../../server/storage/key-change-feed.js';
import { createPassageStore } from '../../server/storage/passage-store.js';
import { createProjectStore } from '../../server/storage/project-store.js';
import { openPostgresStores } from '../../server/storage/postgres/open-postgres-stores.js';
import { createResponseStore } from '../../server/storage/response-store.js';
import type { UsageEntry } from '../../server/storage/usage-store.js';
import { createUsageStore } from '../../server/storage/usage-store.js';
import { createVideoTaskStore, type NewVideoTask } from '../../server/storage/video-task-store.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';

async function openSqlite(directory: string) {
  const db = openDatabase(':memory:');
  const keyChanges = createLocalKeyChangeFeed();
  // Wired as services.ts wires them: each store adds the other's bytes to a key's quota.
  let files: ReturnType<typeof createFileStore> | undefined;
  const blobs = createBlobStore(db, path.join(directory, 'blobs'), {
    otherHeldBytes: (keyId, now) => files?.fileBytesNow(keyId, now) ?? 0,
  });
  files = createFileStore(db, { otherHeldBytes: (keyId, now) => blobs.heldBytesNow(keyId, now) });
  return {
    keyChanges,
    keys: createKeyStore(db, { pepper: randomBytes(32), changes: keyChanges }),
    projects: createProjectStore(db, { changes: keyChanges }),
    usage: createUsageStore(db),
    responses: createResponseStore(db),
    files,
    passages: createPassageStore(db),
    videoTasks: createVideoTaskStore(db),
    blobs: blobs,
    close: async () => db.close(),
  };
}

async function openPostgres(directory: string) {
  const database = await createTestDatabase();
  try {
    const stores = await openPostgresStores({
      url: database.url,
      pepper: randomBytes(32),
      blobs: path.join(directory, 'blobs'),
    });
    return {
      ...stores,
      close: async () => {
        await stores.close();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

type Backend = Awaited<ReturnType<typeof openSqlite>>;

let pgUp = false;
beforeAll(async () => {
  pgUp = await postgresAvailable();
});

const backends: Array<[string, (directory: string) => Promise<Backend>]> = [
  ['sqlite', openSqlite],
  ['postgres', openPostgres as unknown as (directory: string) => Promise<Backend>],
];

const usageEntry = (overrides: Partial<UsageEntry> = {}): UsageEntry => ({
  requestId: `req_${randomBytes(4).toString('hex')}`,
  keyId: 'key_a',
  operation: 'chat.completions',
  modelRequested: 'm',
  model: 'local:chat',
  provider: 'local',
  inputTokens: 3,
  outputTokens: 5,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  units: null,
  media: null,
  status: 200,
  latencyMs: 12,
  createdAt: 1_800_000_000,
  ...overrides,
});

const videoTask = (keyId = 'key_a', prompt = 'a boat'): NewVideoTask => ({
  keyId,
  requestId: `req_${prompt}`,
  model: 'local:video',
  prompt,
  seconds: 4,
  width: 320,
  height: 240,
  inputBlob: null,
});

describe.each(backends)('store contract on %s', (backendName, open) => {
  let cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) {
      await step();
    }
    cleanup = [];
  });

  /** The stores of one case, or undefined when this backend is skipped. */
  async function stores(context: { skip: (note?: string) => void }): Promise<Backend> {
    if (backendName === 'postgres' && !pgUp) {
      context.skip('no PostgreSQL server');
    }
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-contract-'));
    const backend = await open(directory);
    cleanup.push(async () => {
      await backend.close();
      rmSync(directory, { recursive: true, force: true });
    });
    return backend;
  }

  it('keys: create, verify, find by prefix or secret, revoke, count', async (context) => {
    const { keys } = await stores(context);
    const { key, record } = await keys.create({ name: 'ci', allowedModels: ['local:chat'] });
    expect(record).toMatchObject({
      name: 'ci',
      prefix: key.slice(0, 7),
      allowedModels: ['local:chat'],
      revokedAt: null,
    });
    expect((await keys.verify(key))?.id).toBe(record.id);
    expect(await keys.verify(`${key}x`)).toBeUndefined();
    expect((await keys.find(record.prefix)).map((found) => found.id)).toEqual([record.id]);
    expect((await keys.find(key)).map((found) => found.id)).toEqual([record.id]);
    const operator = await keys.ensure('a-chosen-operator-key', 'env-0');
    expect(operator.prefix).toBe('');
    expect((await keys.ensure('a-chosen-operator-key', 'env-0')).id).toBe(operator.id);
    expect(await keys.count()).toBe(2);
    expect((await keys.list()).map((listed) => listed.id).sort()).toEqual([record.id, operator.id].sort());
    expect(await keys.revoke(record.id)).toBe(true);
    expect(await keys.verify(key)).toBeUndefined();
    expect(await keys.revoke(record.id)).toBe(false);
    expect(await keys.count()).toBe(1);
    expect(await keys.find('')).toEqual([]);
  });

  it('keys: a project, own limits and the admin flag, stored and updated with a change announced', async (context) => {
    const { keys, keyChanges } = await stores(context);
    const heard: KeyChange[] = [];
    const stop = keyChanges.subscribe((change) => heard.push(change));
    const { key, record } = await keys.create({
      name: 'limited',
      project: 'research',
      limits: { rpm: 5, budgetUsd: 2.5, budgetPeriod: 'day' },
    });
    expect(record).toMatchObject({ project: 'research', limits: { rpm: 5, budgetUsd: 2.5, budgetPeriod: 'day' } });
    expect(record.admin).toBe(false);
    expect(await keys.verify(key)).toMatchObject({ project: 'research', limits: { rpm: 5 } });
    const adminKey = await keys.create({ name: 'ops', admin: true });
    expect((await keys.verify(adminKey.key))?.admin).toBe(true);
    const plain = await keys.create({ name: 'plain' });
    expect(plain.record).toMatchObject({ project: null, limits: {}, admin: false });

    heard.length = 0;
    const updated = await keys.update(record.id, { name: 'renamed', limits: { tpm: 100 } });
    expect(updated).toMatchObject({ name: 'renamed', project: 'research', limits: { tpm: 100 } });
    expect(updated?.limits?.rpm).toBeUndefined();
    expect(heard).toContainEqual({ kind: 'updated', keyId: record.id });
    expect(await keys.update(record.id, { project: null })).toMatchObject({ project: null, limits: { tpm: 100 } });
    expect(await keys.update('key_missing', { name: 'x' })).toBeUndefined();
    expect((await keys.get(record.id))?.name).toBe('renamed');
    expect(await keys.get('key_missing')).toBeUndefined();
    await keys.revoke(record.id);
    expect((await keys.get(record.id))?.revokedAt).toEqual(expect.any(Number));
    stop();
  });

  it('projects: create once, list by name, update limits, delete; every change announced', async (context) => {
    const { projects, keyChanges } = await stores(context);
    const heard: KeyChange[] = [];
    const stop = keyChanges.subscribe((change) => heard.push(change));
    const created = await projects.create({ name: 'beta', limits: { rpm: 10 } });
    expect(created).toMatchObject({ name: 'beta', limits: { rpm: 10 }, createdAt: expect.any(Number) });
    expect(await projects.create({ name: 'beta' })).toBeUndefined();
    await projects.create({ name: 'alpha' });
    expect((await projects.list()).map((project) => project.name)).toEqual(['alpha', 'beta']);
    expect(await projects.update('beta', { budgetUsd: 3, budgetPeriod: 'total' })).toMatchObject({
      limits: { budgetUsd: 3, budgetPeriod: 'total' },
    });
    expect((await projects.get('beta'))?.limits).toEqual({ budgetUsd: 3, budgetPeriod: 'total' });
    expect(await projects.update('gamma', {})).toBeUndefined();
    expect(await projects.delete('beta')).toBe(true);
    expect(await projects.delete('beta')).toBe(false);
    expect(await projects.get('beta')).toBeUndefined();
    // create alpha, create beta, update, delete: four announcements at least (a feed may repeat one).
    expect(heard.length).toBeGreaterThanOrEqual(4);
    stop();
  });

  it('usage: a summary per day, model and key sums the records (only the keys asked for)', async (context) => {
    const { usage } = await stores(context);
    const day = 86_400;
    await usage.insertMany([
      usageEntry({ keyId: 'key_a', model: 'm1', inputTokens: 3, outputTokens: 4, costUsd: 0.5, createdAt: day }),
      usageEntry({ keyId: 'key_a', model: 'm2', inputTokens: 1, outputTokens: 1, costUsd: 0.25, createdAt: day + 10 }),
      usageEntry({ keyId: 'key_b', model: 'm1', inputTokens: 10, outputTokens: 0, units: 2, createdAt: 2 * day + 5 }),
      usageEntry({
        keyId: 'key_a',
        model: null,
        modelRequested: null,
        inputTokens: 0,
        outputTokens: 0,
        createdAt: 2 * day,
      }),
    ] as UsageEntry[]);
    const byDay = await usage.summary({ groupBy: 'day' });
    expect(byDay.map((row) => [row.group, row.requests])).toEqual([
      ['1970-01-02', 2],
      ['1970-01-03', 2],
    ]);
    const byModel = await usage.summary({ groupBy: 'model' });
    expect(byModel.find((row) => row.group === 'm1')).toMatchObject({
      requests: 2,
      inputTokens: 13,
      outputTokens: 4,
      mediaUnits: 2,
      costUsd: 0.5,
    });
    expect(byModel.find((row) => row.group === '')?.requests).toBe(1);
    const byKey = await usage.summary({ groupBy: 'key', keyIds: ['key_a'] });
    expect(byKey).toEqual([
      { group: 'key_a', requests: 3, inputTokens: 4, outputTokens: 5, mediaUnits: 0, costUsd: 0.75 },
    ]);
    expect(await usage.summary({ groupBy: 'key', keyIds: [] })).toEqual([]);
    const since = await usage.summary({ groupBy: 'key', since: 2 * day, until: 2 * day + 1 });
    expect(since).toEqual([expect.objectContaining({ group: 'key_a', requests: 1 })]);
  });

  it('usage: batches in, pages by cursor both ways, filters by request id, model and time, amends media', async (context) => {
    const { usage } = await stores(context);
    const entries = Array.from({ length: 5 }, (_, index) =>
      usageEntry({
        requestId: `req_${index}`,
        createdAt: 1_800_000_000 + index * 50_000,
        model: index === 2 ? 'x' : 'y',
      }),
    );
    await usage.insertMany([...entries, usageEntry({ keyId: 'key_b' })]);
    await usage.insertMany([]);
    const first = await usage.list({ keyId: 'key_a', limit: 2, order: 'asc' });
    expect(first.records.map((record) => record.requestId)).toEqual(['req_0', 'req_1']);
    expect(first.hasMore).toBe(true);
    const rest = await usage.list({ keyId: 'key_a', limit: 10, order: 'asc', after: first.records[1].id });
    expect(rest.records.map((record) => record.requestId)).toEqual(['req_2', 'req_3', 'req_4']);
    expect(rest.hasMore).toBe(false);
    const back = await usage.list({ keyId: 'key_a', limit: 10, order: 'desc', after: rest.records[1].id });
    expect(back.records.map((record) => record.requestId)).toEqual(['req_2', 'req_1', 'req_0']);
    expect((await usage.list({ keyId: 'key_a', limit: 10, order: 'asc', requestId: 'req_3' })).records).toHaveLength(1);
    expect((await usage.list({ keyId: 'key_a', limit: 10, order: 'asc', model: 'x' })).records[0].requestId).toBe(
      'req_2',
    );
    const window = await usage.list({
      keyId: 'key_a',
      limit: 10,
      order: 'asc',
      since: 1_800_050_000,
      until: 1_800_150_000,
    });
    expect(window.records.map((record) => record.requestId)).toEqual(['req_1', 'req_2']);
    expect(
      (await usage.list({ keyId: 'key_a', limit: 10, order: 'asc', after: 'usage_99999999999999999999999' })).records,
    ).toEqual([]);
    expect((await usage.list({ keyId: 'key_a', limit: 10, order: 'asc', after: 'garbage' })).records).toHaveLength(5);
    expect(await usage.amendMedia('req_4', { units: 4, media: { video: { seconds: 4 } } as never })).toBe(true);
    expect(await usage.amendMedia('req_none', { units: 4, media: {} as never })).toBe(false);
    const amended = (await usage.list({ keyId: 'key_a', limit: 1, order: 'asc', requestId: 'req_4' })).records[0];
    expect(amended).toMatchObject({ units: 4, media: { video: { seconds: 4 } }, inputTokens: 3, latencyMs: 12 });
    expect(amended).toMatchObject({ deployment: null, attempts: null });
    // A video made later names the deployment that made it (and its provider) on the create call's record.
    const placed = { deployment: 'west:sora-2', provider: 'west', attempts: 2 };
    expect(await usage.amendMedia('req_4', { units: 5, media: {} as never, placed })).toBe(true);
    const placedRecord = (await usage.list({ keyId: 'key_a', limit: 1, order: 'asc', requestId: 'req_4' })).records[0];
    expect(placedRecord).toMatchObject({ units: 5, deployment: 'west:sora-2', provider: 'west', attempts: 2 });
    // A failed video's record gets the placement alone: units and media stay.
    const failedPlacement = { deployment: 'east:sora-2', provider: 'east', attempts: 6 };
    expect(await usage.amendMedia('req_4', { placed: failedPlacement })).toBe(true);
    const failedRecord = (await usage.list({ keyId: 'key_a', limit: 1, order: 'asc', requestId: 'req_4' })).records[0];
    expect(failedRecord).toMatchObject({
      units: 5,
      media: {},
      deployment: 'east:sora-2',
      provider: 'east',
      attempts: 6,
    });
    expect(amended.id).toMatch(/^usage_\d+$/);
  });

  it('usage: a search answer keeps its search step’s deployment and attempts beside its writer’s', async (context) => {
    const { usage } = await stores(context);
    await usage.insertMany([
      usageEntry({
        requestId: 'req_answer',
        deployment: 'east:gpt-4o',
        attempts: 1,
        searchDeployment: 'sb:searxng',
        searchAttempts: 3,
      }),
      usageEntry({ requestId: 'req_plain' }),
    ]);
    const rows = (await usage.list({ keyId: 'key_a', limit: 10, order: 'asc' })).records;
    expect(rows.find((row) => row.requestId === 'req_answer')).toMatchObject({
      deployment: 'east:gpt-4o',
      attempts: 1,
      searchDeployment: 'sb:searxng',
      searchAttempts: 3,
    });
    expect(rows.find((row) => row.requestId === 'req_plain')).toMatchObject({
      searchDeployment: null,
      searchAttempts: null,
    });
  });

  it('responses: saved per key, items by id, deleted with their items, purged by age', async (context) => {
    const { responses } = await stores(context);
    const response = { id: 'resp_1', output: [{ id: 'msg_1', type: 'message' }] } as never;
    await responses.save({
      id: 'resp_1',
      keyId: 'key_a',
      createdAt: 100,
      response,
      conversation: [],
      inputItems: ['hi'],
    });
    await responses.save({
      id: 'resp_2',
      keyId: 'key_a',
      createdAt: 300,
      response: { id: 'resp_2', output: [] } as never,
      conversation: [],
    });
    expect(await responses.get('resp_1', 'key_a')).toEqual({ response, conversation: [], inputItems: ['hi'] });
    expect(await responses.get('resp_1', 'key_b')).toBeUndefined();
    expect(await responses.getItem('msg_1', 'key_a')).toEqual({ id: 'msg_1', type: 'message' });
    expect(await responses.getItem('msg_1', 'key_b')).toBeUndefined();
    expect(await responses.delete('resp_1', 'key_b')).toBe(false);
    expect(await responses.delete('resp_1', 'key_a')).toBe(true);
    expect(await responses.getItem('msg_1', 'key_a')).toBeUndefined();
    expect(await responses.deleteOlderThan(301)).toBe(1);
    expect(await responses.get('resp_2', 'key_a')).toBeUndefined();
  });

  it('files: quota checked with the insert (owned blobs count), pages, expiry, indexing state', async (context) => {
    const { files, blobs } = await stores(context);
    const file = (bytes: number, expiresAt: number | null = null) => ({
      keyId: 'key_a',
      blobId: 'file_blob',
      filename: 'a.txt',
      purpose: 'assistants',
      bytes,
      sha256: 'ab',
      mediaType: 'text/plain',
      createdAt: 10,
      expiresAt,
    });
    const quota = { maxBytes: 100, maxCount: 3 };
    const first = await files.create(file(40), quota, 10);
    expect('file' in first && first.file.id).toMatch(/^file-/);
    await blobs.put(new Uint8Array(30), {
      prefix: 'img',
      mediaType: 'image/png',
      expiresAt: null,
      owner: { keyId: 'key_a' },
    });
    expect(await files.holdings('key_a', 10)).toEqual({ bytes: 70, count: 1 });
    // A generated blob meets the same budget: the key's file counts against it too.
    await expect(
      blobs.put(new Uint8Array(31), {
        prefix: 'img',
        mediaType: 'image/png',
        expiresAt: null,
        now: 10_000,
        owner: { keyId: 'key_a', quota: { maxBytes: 100, refuse: (held) => new Error(`full at ${held}`) } },
      }),
    ).rejects.toThrow('full at 70');
    expect(await files.create(file(31), quota, 10)).toMatchObject({ refused: 'bytes' });
    const second = await files.create(file(10, 20), quota, 10);
    await files.create(file(10), quota, 10);
    expect(await files.create(file(1), quota, 10)).toMatchObject({ refused: 'count' });
    const listed = await files.list({ keyId: 'key_a', limit: 2, order: 'asc', now: 10 });
    expect(listed.hasMore).toBe(true);
    const next = await files.list({ keyId: 'key_a', limit: 2, order: 'asc', now: 10, after: listed.files[1].id });
    expect(next.files).toHaveLength(1);
    expect(await files.list({ keyId: 'key_a', limit: 2, order: 'asc', now: 10, after: 'file-unknown' })).toEqual({
      files: [],
      hasMore: false,
    });
    if (!('file' in second)) throw new Error('refused');
    expect(await files.get(second.file.id, 'key_a', 25)).toBeUndefined();
    expect((await files.takeExpired(25, 10)).map((taken) => taken.id)).toEqual([second.file.id]);
    expect(await files.get(second.file.id, 'key_b', 10)).toBeUndefined();
    if (!('file' in first)) throw new Error('refused');
    expect(await files.setIndexing(first.file.id, { status: 'indexing' })).toBe(true);
    expect(await files.abandonIndexing({ status: 'failed', reason: 'restart', code: 'x' }, 10)).toBe(1);
    expect((await files.get(first.file.id, 'key_a', 10))?.indexing).toEqual({
      status: 'failed',
      reason: 'restart',
      code: 'x',
    });
    expect((await files.delete(first.file.id, 'key_a'))?.id).toBe(first.file.id);
    expect(await files.delete(first.file.id, 'key_a')).toBeUndefined();
  });

  it('files: a row created indexing is held by its lease while renewed, and failed once the lease ends', async (context) => {
    const { files } = await stores(context);
    const create = async (indexing: 'indexing' | 'indexed') => {
      const created = await files.create(
        {
          keyId: 'key_a',
          blobId: 'b',
          filename: 'a.pdf',
          purpose: 'assistants',
          bytes: 1,
          sha256: 'x',
          mediaType: 'application/pdf',
          createdAt: 1_000,
          expiresAt: null,
          indexing: { status: indexing },
        },
        { maxBytes: 100, maxCount: 10 },
        1_000,
      );
      if (!('file' in created)) throw new Error('refused');
      return created.file.id;
    };
    const live = await create('indexing');
    const dead = await create('indexing');
    await create('indexed');
    const interrupted = { status: 'failed' as const, code: 'interrupted', reason: 'stopped' };
    // Another instance starting now finds both leases running: it fails neither.
    expect(await files.abandonIndexing(interrupted, 1_000)).toBe(0);
    expect(await files.abandonIndexing(interrupted, 1_000 + INDEXING_LEASE_SECONDS - 1)).toBe(0);
    // The live indexer renews its file; the dead one's lease runs out and only that row is failed.
    await files.renewIndexing([live, 'file-unknown'], 1_000 + 3 * INDEXING_LEASE_SECONDS);
    expect(await files.abandonIndexing(interrupted, 1_000 + INDEXING_LEASE_SECONDS + 1)).toBe(1);
    expect((await files.get(dead, 'key_a', 1_000))?.indexing).toMatchObject({ status: 'failed', code: 'interrupted' });
    expect((await files.get(live, 'key_a', 1_000))?.indexing?.status).toBe('indexing');
    // Finished: no lease left to renew, and nothing for an abandonment to take.
    expect(await files.setIndexing(live, { status: 'indexed' })).toBe(true);
    await files.renewIndexing([live], 1_000 + 10 * INDEXING_LEASE_SECONDS);
    expect(await files.abandonIndexing(interrupted, 1_000 + 20 * INDEXING_LEASE_SECONDS)).toBe(0);
    expect((await files.get(live, 'key_a', 1_000))?.indexing?.status).toBe('indexed');
  });

  it("passages: only the key's own, title ranked first, snippets, replaced and removed", async (context) => {
    const { passages } = await stores(context);
    await passages.replace(
      { fileId: 'file_a', keyId: 'key_1', title: 'lighthouse.md' },
      ['The keeper climbs the stairs every night.'],
      1,
    );
    await passages.replace(
      { fileId: 'file_b', keyId: 'key_1', title: 'notes.txt' },
      ['A lighthouse keeper lived alone.'],
      1,
    );
    await passages.replace(
      { fileId: 'file_c', keyId: 'key_2', title: 'lighthouse.txt' },
      ['Another key owns this lighthouse.'],
      1,
    );
    const hits = await passages.search({ keyId: 'key_1', match: '"lighthouse"', limit: 10 });
    expect(hits.map((hit) => hit.fileId)).toEqual(['file_a', 'file_b']);
    expect(hits[1]).toMatchObject({ title: 'notes.txt', passage: 'A lighthouse keeper lived alone.', indexedAt: 1 });
    expect(hits[1].snippet).toContain('lighthouse');
    expect(hits[0].score).toBeGreaterThan(0);
    expect(await passages.search({ keyId: 'key_1', match: '"stairs" OR "nothing"', limit: 10 })).toHaveLength(1);
    expect(await passages.search({ keyId: 'key_2', match: '"keeper"', limit: 10 })).toEqual([]);
    await passages.replace({ fileId: 'file_b', keyId: 'key_1', title: 'notes.txt' }, ['new words', 'more words'], 2);
    expect(await passages.search({ keyId: 'key_1', match: '"alone"', limit: 10 })).toEqual([]);
    expect(await passages.count('key_1')).toBe(3);
    await passages.remove('file_b');
    expect(await passages.count('key_1')).toBe(1);
  });

  it('passage vectors: stored per model, re-embedded on a model change, ranked by cosine, gone with the file', async (context) => {
    const { passages } = await stores(context);
    await passages.replace({ fileId: 'file_a', keyId: 'key_1', title: 'a.txt' }, ['north', 'south'], 1);
    await passages.replace({ fileId: 'file_b', keyId: 'key_2', title: 'b.txt' }, ['east'], 1);
    const pending = await passages.unembedded('m1', 10);
    expect(pending.map((passage) => passage.text)).toEqual(['north', 'south', 'east']);
    const vectors: Record<string, number[]> = { north: [1, 0], south: [-1, 0], east: [0, 1] };
    await passages.storeVectors(
      'm1',
      pending.map((passage) => ({ id: passage.id, vector: vectors[passage.text]! })),
    );
    expect(await passages.unembedded('m1', 10)).toEqual([]);
    // Another model's vectors are not this model's: all of them are pending again.
    expect(await passages.unembedded('m2', 10)).toHaveLength(3);
    const near = await passages.nearest({ keyId: 'key_1', model: 'm1', vector: [0.9, 0.1], limit: 10 });
    expect(near.map((hit) => hit.passage)).toEqual(['north', 'south']);
    expect(near[0]!.score).toBeCloseTo(0.9 / Math.hypot(0.9, 0.1), 5);
    expect(near[0]).toMatchObject({ fileId: 'file_a', title: 'a.txt', indexedAt: 1 });
    expect(await passages.nearest({ keyId: 'key_1', model: 'm2', vector: [1, 0], limit: 10 })).toEqual([]);
    // A vector for a passage removed meanwhile is dropped, and removing a file removes its vectors.
    await passages.remove('file_a');
    await passages.storeVectors('m1', [{ id: pending[0]!.id, vector: [1, 0] }]);
    expect(await passages.nearest({ keyId: 'key_1', model: 'm1', vector: [1, 0], limit: 10 })).toEqual([]);
    expect(await passages.unembedded('m2', 10)).toHaveLength(1);
  });

  it('passage embedding claims: each passage taken by one claimant while its claim lives, freed by vectors, release or expiry', async (context) => {
    const { passages } = await stores(context);
    await passages.replace({ fileId: 'file_a', keyId: 'key_1', title: 'a.txt' }, ['one', 'two', 'three'], 1);
    await passages.replace({ fileId: 'file_b', keyId: 'key_2', title: 'b.txt' }, ['four'], 1);
    // Two claimants at once (two workers): disjoint batches that together cover every passage.
    const [first, second] = await Promise.all([
      passages.claimUnembedded('m1', 2, 1_000, 61_000),
      passages.claimUnembedded('m1', 2, 1_000, 61_000),
    ]);
    const taken = [...first, ...second].map((passage) => passage.text);
    expect(new Set(taken).size).toBe(taken.length);
    expect(await passages.claimUnembedded('m1', 10, 2_000, 62_000)).toEqual(
      (await passages.unembedded('m1', 10))
        .filter((passage) => !taken.includes(passage.text))
        .map((passage) => ({ ...passage, keyId: passage.text === 'four' ? 'key_2' : 'key_1' })),
    );
    expect(await passages.claimUnembedded('m1', 10, 3_000, 63_000)).toEqual([]);
    // Vectors drop the claim (nothing left to embed); a release frees the rest at once.
    const all = await passages.unembedded('m1', 10);
    expect(all.map((passage) => passage.text)).toEqual(['one', 'two', 'three', 'four']);
    await passages.storeVectors('m1', [{ id: all[0]!.id, vector: [1, 0] }]);
    await passages.releaseClaims([all[1]!.id]);
    expect((await passages.claimUnembedded('m1', 10, 4_000, 64_000)).map((passage) => passage.text)).toEqual(['two']);
    // A claimant that died: its claims expire at their `until` and are taken over.
    const retaken = await passages.claimUnembedded('m1', 10, 100_000, 160_000);
    expect(retaken.map((passage) => [passage.text, passage.keyId])).toEqual([
      ['two', 'key_1'],
      ['three', 'key_1'],
      ['four', 'key_2'],
    ]);
    // Another model's claims do not hold this model back.
    expect(await passages.claimUnembedded('m2', 10, 100_001, 160_001)).toHaveLength(4);
    await passages.remove('file_a');
    expect(await passages.claimUnembedded('m3', 10, 100_002, 160_002)).toHaveLength(1);
  });

  it('passages appended a batch at a time follow the file’s, and a claim after a cursor skips the passages before it', async (context) => {
    const { passages } = await stores(context);
    const file = { fileId: 'file_a', keyId: 'key_1', title: 'a.txt' };
    await passages.append(file, ['one', 'two'], 0, 1);
    await passages.append(file, ['three', 'four', 'five'], 2, 1);
    expect(await passages.count('key_1')).toBe(5);
    expect((await passages.search({ keyId: 'key_1', match: '"four"', limit: 5 })).map((hit) => hit.passage)).toEqual([
      'four',
    ]);
    const first = await passages.claimUnembedded('m1', 2, 1_000, 61_000, 0);
    expect(first.map((passage) => passage.text)).toEqual(['one', 'two']);
    const next = await passages.claimUnembedded('m1', 2, 1_000, 61_000, first[1]!.id);
    expect(next.map((passage) => passage.text)).toEqual(['three', 'four']);
    // Released behind the cursor: not seen after it, found again from the start.
    await passages.releaseClaims([first[0]!.id]);
    expect(
      (await passages.claimUnembedded('m1', 10, 1_000, 61_000, next[1]!.id)).map((passage) => passage.text),
    ).toEqual(['five']);
    expect((await passages.claimUnembedded('m1', 10, 1_000, 61_000, 0)).map((passage) => passage.text)).toEqual([
      'one',
    ]);
  });

  it('video tasks: claim once under a lease, fair across keys, take over expired leases, complete', async (context) => {
    const { videoTasks } = await stores(context);
    const a1 = await videoTasks.create(videoTask('key_a', 'a1'), 1_000);
    await videoTasks.create(videoTask('key_a', 'a2'), 1_001);
    const b1 = await videoTasks.create(videoTask('key_b', 'b1'), 1_002);
    const first = await videoTasks.claim('r1', 5_000, 10_000);
    expect(first).toMatchObject({ id: a1.id, status: 'processing', claimedBy: 'r1', leaseUntil: 15_000, attempts: 1 });
    // key_a holds a runner now: key_b's task goes before key_a's second.
    expect((await videoTasks.claim('r2', 5_000, 100_000))?.id).toBe(b1.id);
    expect((await videoTasks.claim('r3', 5_000, 100_000))?.prompt).toBe('a2');
    expect(await videoTasks.claim('r4', 5_000, 10_000)).toBeUndefined();
    expect(await videoTasks.activeCount('key_a')).toBe(2);
    // r1 died: its lease runs out and r5 takes the task over; r1 can no longer touch it.
    expect((await videoTasks.claim('r5', 15_001, 10_000))?.id).toBe(a1.id);
    expect(await videoTasks.renew(a1.id, 'r1', 15_002, 1_000)).toBe(false);
    await videoTasks.setProgress(a1.id, 'r5', 40);
    await videoTasks.setProgress(a1.id, 'r5', 30);
    await videoTasks.setCheckpoint(a1.id, 'r5', 'job-7');
    expect(await videoTasks.get(a1.id, 'key_a')).toMatchObject({ progress: 40, checkpoint: 'job-7', attempts: 2 });
    expect(await videoTasks.complete(a1.id, 'r5', { videoBlob: 'v', thumbnailBlob: null, now: 2, expiresAt: 3 })).toBe(
      true,
    );
    expect(await videoTasks.release(b1.id, 'r2', 30_000, { refundAttempt: true })).toBe(true);
    expect(await videoTasks.get(b1.id, 'key_b')).toMatchObject({ status: 'queued', attempts: 0 });
    expect(await videoTasks.countByStatus()).toEqual({ completed: 1, processing: 1, queued: 1 });
    const refused = await videoTasks.createWithin(videoTask('key_a', 'a3'), 2_000, 1);
    expect(refused).toEqual({ refused: { active: 1 } });
    const page = await videoTasks.list({ keyId: 'key_a', limit: 1, order: 'desc' });
    expect(page.hasMore).toBe(true);
    expect(page.tasks[0].prompt).toBe('a2');
    await videoTasks.setRemixedFrom(b1.id, a1.id);
    expect(await videoTasks.remixedFrom(b1.id)).toBe(a1.id);
    expect((await videoTasks.delete(b1.id, 'key_b'))?.id).toBe(b1.id);
    expect(await videoTasks.remixedFrom(b1.id)).toBeNull();
    expect(await videoTasks.get(a1.id, 'key_b')).toBeUndefined();
  });

  it('video tasks: upstream attempts counted by the runner holding the task, summed over queue runs', async (context) => {
    const { videoTasks } = await stores(context);
    const task = await videoTasks.create(videoTask('key_a', 'counted'), 1_000);
    expect(task.upstreamAttempts).toBe(0);
    await videoTasks.claim('r1', 5_000, 10_000);
    expect(await videoTasks.addUpstreamAttempt(task.id, 'r1')).toBe(1);
    expect(await videoTasks.addUpstreamAttempt(task.id, 'r1')).toBe(2);
    // Not r2's task: nothing counted.
    expect(await videoTasks.addUpstreamAttempt(task.id, 'r2')).toBeUndefined();
    expect(await videoTasks.release(task.id, 'r1', 6_000)).toBe(true);
    // The next queue run starts from the sum so far.
    expect(await videoTasks.claim('r2', 7_000, 10_000)).toMatchObject({
      id: task.id,
      attempts: 2,
      upstreamAttempts: 2,
    });
    expect(await videoTasks.addUpstreamAttempt(task.id, 'r2')).toBe(3);
    await videoTasks.fail(task.id, 'r2', { code: 'upstream_error', message: 'x', now: 8 });
    expect(await videoTasks.addUpstreamAttempt(task.id, 'r2')).toBeUndefined();
    expect(await videoTasks.get(task.id, 'key_a')).toMatchObject({ status: 'failed', upstreamAttempts: 3 });
  });

  it('takes any text a caller can send, NUL included, in every stored string', async (context) => {
    const { usage, videoTasks, files } = await stores(context);
    const odd = 'a\u0000b\uD800"\'\\';
    await usage.insertMany([usageEntry({ requestId: 'req_odd', modelRequested: odd })]);
    expect((await usage.list({ keyId: 'key_a', limit: 1, order: 'asc', model: 'none' })).records).toEqual([]);
    expect((await usage.list({ keyId: 'key_a', limit: 1, order: 'asc' })).records[0].modelRequested).toMatch(/^a.b/);
    const task = await videoTasks.create(videoTask('key_a', odd), 1);
    expect((await videoTasks.get(task.id, 'key_a'))?.prompt).toMatch(/^a.b/);
    expect(await videoTasks.get(odd, odd)).toBeUndefined();
    const created = await files.create(
      {
        keyId: 'key_a',
        blobId: 'b',
        filename: odd,
        purpose: 'assistants',
        bytes: 1,
        sha256: 'x',
        mediaType: 'text/plain',
        createdAt: 1,
        expiresAt: null,
      },
      { maxBytes: 10, maxCount: 10 },
      1,
    );
    expect('file' in created && created.file.filename).toMatch(/^a.b/);
  });

  it('blobs: staged and committed, put with an owner, ranges, quota refusal leaves nothing, purge', async (context) => {
    const { blobs } = await stores(context);
    const staged = await blobs.stage(Readable.from([Buffer.from('hello '), Buffer.from('world')]), { prefix: 'file' });
    expect(staged.size).toBe(11);
    const meta = await staged.commit({ mediaType: 'text/plain', expiresAt: null, now: 5_000 });
    expect(await blobs.get(meta.id)).toEqual({
      id: meta.id,
      mediaType: 'text/plain',
      size: 11,
      createdAt: 5,
      expiresAt: null,
    });
    expect(await text((await blobs.open(meta.id, { start: 6, end: 10 }))!)).toBe('world');
    await expect(
      blobs.put(new Uint8Array(8), {
        prefix: 'img',
        mediaType: 'image/png',
        expiresAt: 50,
        owner: { keyId: 'key_a', quota: { maxBytes: 7, refuse: () => new Error('over quota') } },
      }),
    ).rejects.toThrow('over quota');
    expect(await blobs.heldBytes('key_a', 0)).toBe(0);
    const owned = await blobs.put(new Uint8Array(8), {
      prefix: 'img',
      mediaType: 'image/png',
      expiresAt: 50,
      owner: { keyId: 'key_a' },
    });
    expect(await blobs.heldBytes('key_a', 10)).toBe(8);
    expect(await blobs.purge(60)).toBe(1);
    expect(await blobs.get(owned.id)).toBeUndefined();
    expect(await blobs.get('../etc/passwd')).toBeUndefined();
    expect(await blobs.delete(meta.id)).toBe(true);
    expect(await blobs.open(meta.id)).toBeUndefined();
  });
});
