/**
 * What only the PostgreSQL backend has to prove: migrations applied once by instances starting together and a
 * newer schema refused; a video task claimed exactly once by two instances claiming at the same time; the usage
 * table's day partitions made ahead and dropped by retention; no search string raising a database error; a key
 * revoked through one instance refused by another through LISTEN/NOTIFY; a foreign pepper refused; blob bytes
 * shared through a byte store; one key's storage quota held by two instances inserting at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDirectoryByteStore } from '../../server/storage/bytes/directory-byte-store.js';
import type { KeyChange } from '../../server/storage/key-change-feed.js';
import { createKeyCache } from '../../server/storage/key-cache.js';
import { MIGRATIONS, migrate, SchemaTooNewError } from '../../server/storage/postgres/migrations.js';
import { openPostgresStores } from '../../server/storage/postgres/open-postgres-stores.js';
import { createPostgresPassageStore } from '../../server/storage/postgres/passage-store.js';
import { createPostgresPool, type PgPool } from '../../server/storage/postgres/pool.js';
import { partitionName } from '../../server/storage/postgres/usage-partitions.js';
import { createPostgresUsageStore } from '../../server/storage/postgres/usage-store.js';
import { createPostgresVideoTaskStore } from '../../server/storage/postgres/video-task-store.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.js';

let available = false;
beforeAll(async () => {
  available = await postgresAvailable();
});

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) {
    await step();
  }
  cleanup = [];
});

async function database(context: { skip: (note?: string) => void }): Promise<TestDatabase> {
  if (!available) {
    context.skip('no PostgreSQL server');
  }
  const created = await createTestDatabase();
  cleanup.push(() => created.drop());
  return created;
}

function pool(url: string): PgPool {
  const opened = createPostgresPool(url, { max: 4 });
  cleanup.push(() => opened.end());
  return opened;
}

describe('PostgreSQL backend', () => {
  it('applies the migrations once when several instances start together', async (context) => {
    const { url } = await database(context);
    const pools = Array.from({ length: 5 }, () => pool(url));
    const applied = await Promise.all(pools.map((each) => migrate(each)));
    const versions = MIGRATIONS.map((migration) => migration.version);
    // Each version applied by exactly one of the five.
    expect(applied.flat().sort((a, b) => a - b)).toEqual(versions);
    const { rows } = await pools[0].query('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows).toEqual(versions.map((version) => ({ version })));
    expect(await migrate(pools[0])).toEqual([]);
  });

  it('refuses a database migrated by a newer release, naming both versions', async (context) => {
    const { url } = await database(context);
    const db = pool(url);
    await migrate(db);
    await db.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
    const refusal = await migrate(db).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SchemaTooNewError);
    const known = Math.max(...MIGRATIONS.map((migration) => migration.version));
    expect((refusal as Error).message).toContain(`schema version 999, newer than this Omnigate knows (${known})`);
  });

  it('hands each video task to exactly one of two instances claiming at once', async (context) => {
    const { url } = await database(context);
    const first = pool(url);
    await migrate(first);
    const instances = [createPostgresVideoTaskStore(first), createPostgresVideoTaskStore(pool(url))];
    const created = new Set<string>();
    for (let index = 0; index < 40; index++) {
      const task = await instances[0].create(
        {
          keyId: `key_${index % 4}`,
          requestId: `req_${index}`,
          model: 'local:video',
          prompt: `p${index}`,
          seconds: 4,
          width: 32,
          height: 32,
          inputBlob: null,
        },
        index,
      );
      created.add(task.id);
    }
    const claimed: string[][] = [[], []];
    await Promise.all(
      instances.map(async (store, which) => {
        for (;;) {
          const task = await store.claim(`runner-${which}`, 1_000, 60_000);
          if (!task) {
            return;
          }
          claimed[which].push(task.id);
        }
      }),
    );
    const all = [...claimed[0], ...claimed[1]];
    expect(all).toHaveLength(40);
    expect(new Set(all)).toEqual(created);
    // Both instances took part: the claims interleaved rather than one instance taking everything.
    expect(claimed[0].length).toBeGreaterThan(0);
    expect(claimed[1].length).toBeGreaterThan(0);
  });

  it('writes usage into day partitions made ahead, and retention drops whole partitions', async (context) => {
    const { url } = await database(context);
    const db = pool(url);
    await migrate(db);
    const usage = createPostgresUsageStore(db);
    const day = 86_400;
    const base = 20_000 * day; // 2024-10-04
    const entry = (createdAt: number, requestId: string) => ({
      requestId,
      keyId: 'key_a',
      operation: 'chat.completions',
      modelRequested: null,
      model: 'local:chat',
      provider: 'local',
      inputTokens: 1,
      outputTokens: 1,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      units: null,
      media: null,
      status: 200,
      latencyMs: 1,
      createdAt,
    });
    const batch = Array.from({ length: 2_500 }, (_, index) =>
      entry(base + (index % 3) * day + (index % 1000), `req_${index}`),
    );
    await usage.insertMany(batch);
    const partitions = async () =>
      (
        await db.query<{ name: string }>(
          "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage_records'::regclass ORDER BY 1",
        )
      ).rows.map((row) => row.name);
    // Three days of rows and two days ahead of the newest.
    expect(await partitions()).toEqual([0, 1, 2, 3, 4].map((offset) => partitionName(20_000 + offset)));
    const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_records');
    expect(counted.rows[0].n).toBe(2_500);
    const listed = await usage.list({ keyId: 'key_a', requestId: 'req_7', limit: 5, order: 'asc' });
    expect(listed.records.map((record) => record.requestId)).toEqual(['req_7']);
    // The plan for a listing by key reads an index on each partition, not the rows.
    const plan = await db.query(
      "EXPLAIN (FORMAT JSON) SELECT * FROM usage_records WHERE key_id = 'key_a' AND request_id = 'req_7' ORDER BY seq LIMIT 5",
    );
    expect(JSON.stringify(plan.rows)).toMatch(/Index/);
    // A second instance that wrote to the first day knows its partition exists.
    const other = createPostgresUsageStore(pool(url));
    await other.insertMany([entry(base + 1, 'other')]);
    const dropped = await usage.partitions.dropOlderThan(base + 2 * day);
    expect(dropped).toEqual([partitionName(20_000), partitionName(20_001)]);
    const left = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_records');
    expect(left.rows[0].n).toBe(833);
    // A later write to a dropped day's time makes its partition again instead of failing.
    await usage.insertMany([entry(base + 5, 'late')]);
    expect((await usage.list({ keyId: 'key_a', requestId: 'late', limit: 1, order: 'asc' })).records).toHaveLength(1);
    // The other instance's knowledge is stale now; its write finds out, makes the partition again and succeeds.
    await usage.partitions.dropOlderThan(base + 2 * day);
    await other.insertMany([entry(base + 2, 'other-late'), entry(base + 3 * day, 'other-today')]);
    expect(
      (await usage.list({ keyId: 'key_a', requestId: 'other-late', limit: 1, order: 'asc' })).records,
    ).toHaveLength(1);
  });

  it('never raises a database error for any search string', async (context) => {
    const { url } = await database(context);
    const db = pool(url);
    await migrate(db);
    const passages = createPostgresPassageStore(db);
    await passages.replace({ fileId: 'f', keyId: 'k', title: 'guide.md' }, ['the lighthouse keeper & the "sea"'], 1);
    const pieces = [
      '"',
      "'",
      '\\',
      '\u0000',
      '&',
      '|',
      '!',
      '<->',
      ':*',
      '(',
      ')',
      'OR',
      'AND',
      '-',
      ' ',
      'NOT',
      '$1',
      ';',
      '--',
      '\u{1F600}',
      'é',
      '\uFFFF',
      '\uD800',
      'lighthouse',
      '*',
    ];
    const random = () => {
      let query = '';
      const length = Math.floor(Math.random() * 12);
      for (let index = 0; index < length; index++) {
        query +=
          Math.random() < 0.6
            ? pieces[Math.floor(Math.random() * pieces.length)]
            : String.fromCodePoint(Math.floor(Math.random() * 0x2ffff));
      }
      return query;
    };
    for (let round = 0; round < 400; round++) {
      const query = random();
      await expect(
        passages.search({ keyId: 'k', match: query, limit: 5 }),
        JSON.stringify(query),
      ).resolves.toBeInstanceOf(Array);
    }
    expect(await passages.search({ keyId: 'k', match: 'lighthouse\u0000"', limit: 5 })).toHaveLength(1);
  });

  it('tells another instance of a key revoked through one, through LISTEN/NOTIFY, and says when it may have missed some', async (context) => {
    const { url } = await database(context);
    const pepper = randomBytes(32);
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-pg-keys-'));
    cleanup.push(async () => rmSync(directory, { recursive: true, force: true }));
    const a = await openPostgresStores({ url, pepper, blobs: path.join(directory, 'a') });
    cleanup.push(() => a.close());
    const b = await openPostgresStores({ url, pepper, blobs: path.join(directory, 'b') });
    cleanup.push(() => b.close());
    const heardOnB: KeyChange[] = [];
    let heard: (() => void) | undefined;
    b.keyChanges.subscribe((change) => {
      heardOnB.push(change);
      heard?.();
    });
    const { key, record } = await a.keys.create({ name: 'shared' });
    expect(await b.keys.verify(key)).toBeDefined();
    const revokedAt = performance.now();
    const revocationHeard = new Promise<void>((resolve) => {
      heard = () => heardOnB.some((change) => change.kind === 'revoked') && resolve();
    });
    expect(await a.keys.revoke(key)).toBe(true);
    await revocationHeard;
    console.info(`key revoked on A heard on B after ${(performance.now() - revokedAt).toFixed(1)} ms`);
    expect(heardOnB).toEqual([
      { kind: 'created', keyId: record.id },
      { kind: 'revoked', keyId: record.id },
    ]);
    expect(await b.keys.verify(key)).toBeUndefined();
    // A change made by hand (not through any instance) is heard too: the trigger sends it.
    await a.pool.query("UPDATE api_keys SET name = 'renamed' WHERE id = $1", [record.id]);
    await vi.waitFor(() => expect(heardOnB.at(-1)).toEqual({ kind: 'updated', keyId: record.id }));
  });

  it("refuses on B's key cache a key revoked through A (the authentication path, no database read per request)", async (context) => {
    const { url } = await database(context);
    const pepper = randomBytes(32);
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-pg-cache-'));
    cleanup.push(async () => rmSync(directory, { recursive: true, force: true }));
    const a = await openPostgresStores({ url, pepper, blobs: path.join(directory, 'a') });
    cleanup.push(() => a.close());
    const b = await openPostgresStores({ url, pepper, blobs: path.join(directory, 'b') });
    cleanup.push(() => b.close());
    const cacheOnB = createKeyCache(b.keys, b.keyChanges);
    cleanup.push(async () => cacheOnB.close());
    const { key } = await a.keys.create({ name: 'cached' });
    // Held once verified (a verification that overlapped the creation's own notice is not kept: verify again).
    await vi.waitFor(async () => {
      expect(await cacheOnB.verify(key)).toBeDefined();
      expect(cacheOnB.cached(key)?.record).toBeDefined();
    });
    const revokedAt = performance.now();
    await a.keys.revoke(key);
    await vi.waitFor(() => expect(cacheOnB.cached(key)?.record).toBeUndefined(), { timeout: 5_000, interval: 5 });
    console.info(`revoked on A, no longer held on B after ${(performance.now() - revokedAt).toFixed(1)} ms`);
    expect(await cacheOnB.verify(key)).toBeUndefined();
  });

  it('reconnects the key change feed after the connection is cut, telling its listeners to re-read', async (context) => {
    const { url } = await database(context);
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-pg-feed-'));
    cleanup.push(async () => rmSync(directory, { recursive: true, force: true }));
    const stores = await openPostgresStores({ url, pepper: randomBytes(32), blobs: directory });
    cleanup.push(() => stores.close());
    const heard: KeyChange[] = [];
    stores.keyChanges.subscribe((change) => heard.push(change));
    // Cut the feed's connection the way a database restart would.
    await stores.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    );
    await vi.waitFor(() => expect(heard).toContainEqual({ kind: 'unknown' }), { timeout: 10_000 });
    const { record } = await stores.keys.create({ name: 'after the cut' });
    // Heard twice: published by this instance, and the trigger's notice over the new connection.
    await vi.waitFor(() =>
      expect(heard.filter((change) => change.kind === 'created' && change.keyId === record.id)).toHaveLength(2),
    );
  });

  it('refuses to start with another pepper than the keys were hashed with', async (context) => {
    const { url } = await database(context);
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-pg-pepper-'));
    cleanup.push(async () => rmSync(directory, { recursive: true, force: true }));
    const first = await openPostgresStores({ url, pepper: randomBytes(32), blobs: directory });
    await first.close();
    await expect(openPostgresStores({ url, pepper: randomBytes(32), blobs: directory })).rejects.toThrow(
      /pepper does not match this PostgreSQL database/,
    );
  });

  it('shares blob bytes through the byte store: what A puts or uploads, B reads and deletes', async (context) => {
    const { url } = await database(context);
    const pepper = randomBytes(32);
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-pg-bytes-'));
    cleanup.push(async () => rmSync(directory, { recursive: true, force: true }));
    const bytes = createDirectoryByteStore(path.join(directory, 'shared'));
    // Each instance stages uploads in a directory of its own; the bytes meet in the shared one.
    const a = await openPostgresStores({ url, pepper, blobs: { bytes, stagingDirectory: path.join(directory, 'a') } });
    cleanup.push(() => a.close());
    const b = await openPostgresStores({ url, pepper, blobs: { bytes, stagingDirectory: path.join(directory, 'b') } });
    cleanup.push(() => b.close());
    const staged = await a.blobs.stage(Readable.from([Buffer.from('uploaded through A')]), { prefix: 'upload' });
    const upload = await staged.commit({ mediaType: 'text/plain', expiresAt: null });
    const media = await a.blobs.put(Buffer.from('generated on A'), {
      prefix: 'media',
      mediaType: 'image/png',
      expiresAt: null,
    });
    expect(await text((await b.blobs.open(upload.id))!)).toBe('uploaded through A');
    expect(await text((await b.blobs.open(media.id, { start: 13, end: 13 }))!)).toBe('A');
    expect(readdirSync(path.join(directory, 'a'))).toEqual([]);
    expect(await b.blobs.delete(upload.id)).toBe(true);
    expect(await a.blobs.open(upload.id)).toBeUndefined();
    expect(readdirSync(path.join(directory, 'shared'))).toEqual([media.id]);
  });

  it("lets no two instances pass one key's storage quota together: owned puts and uploads race on two pools", async (context) => {
    const { url } = await database(context);
    const pepper = randomBytes(32);
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-pg-quota-'));
    cleanup.push(async () => rmSync(directory, { recursive: true, force: true }));
    const a = await openPostgresStores({ url, pepper, blobs: path.join(directory, 'a') });
    cleanup.push(() => a.close());
    const b = await openPostgresStores({ url, pepper, blobs: path.join(directory, 'b') });
    cleanup.push(() => b.close());
    const QUOTA = 100;
    const owner = {
      keyId: 'key_q',
      quota: { maxBytes: QUOTA, refuse: (held: number) => new Error(`full at ${held}`) },
    };
    // 12 generations of 30 bytes and 4 uploads of 30 bytes, half through each instance, all at once: each fits
    // alone, at most 3 fit together.
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 12 }, (_, index) =>
        (index % 2 ? a : b).blobs.put(new Uint8Array(30), {
          prefix: 'media',
          mediaType: 'image/png',
          expiresAt: null,
          owner,
        }),
      ),
      ...Array.from({ length: 4 }, async (_, index) => {
        const created = await (index % 2 ? a : b).files.create(
          {
            keyId: 'key_q',
            blobId: `upload_${index}`,
            filename: 'f.txt',
            purpose: 'assistants',
            bytes: 30,
            sha256: 'x',
            mediaType: 'text/plain',
            createdAt: 1,
            expiresAt: null,
          },
          { maxBytes: QUOTA, maxCount: 100 },
          1,
        );
        if ('refused' in created) throw new Error(`refused: ${created.refused}`);
        return created;
      }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        expect(String(outcome.reason)).toMatch(/full at (60|90)|refused: bytes/);
      }
    }
    expect((await b.files.holdings('key_q', 1)).bytes).toBe(90);
    expect(await a.blobs.heldBytes('key_q', 1)).toBeLessThanOrEqual(90);
  });
});
