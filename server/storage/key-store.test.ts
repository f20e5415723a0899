/**
 * Keys at rest, on real SQLite files: nothing stored lets anyone recover a key (no piece of it, no unsalted
 * hash), a database copied without its pepper verifies nothing, a database written by the SHA-256 version
 * keeps its keys working while being migrated. (How a change reaches the server's key cache: key-cache.test.ts.)
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './database.js';
import { createKeyStore, type KeyStore } from './key-store.js';
import { loadPepper, PEPPER_FILE } from './pepper.js';

const open: SqliteDatabase[] = [];

afterEach(() => {
  for (const db of open.splice(0)) {
    if (db.open) {
      db.close();
    }
  }
});

function tempDataDir(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-key-store-')), 'data');
}

/** Opens the store as the server does: database and pepper in `dir`. */
function openStore(dir: string): { db: SqliteDatabase; keys: KeyStore } {
  const db = openDatabase(path.join(dir, 'omnigate.sqlite'));
  open.push(db);
  return { db, keys: createKeyStore(db, { pepper: loadPepper(dir) }) };
}

/** Every byte SQLite keeps on disk for the database: main file, write-ahead log and shared-memory index. */
function rawBytes(dir: string): Buffer {
  const file = path.join(dir, 'omnigate.sqlite');
  return Buffer.concat(
    [file, `${file}-wal`, `${file}-shm`].filter((name) => existsSync(name)).map((name) => readFileSync(name)),
  );
}

/** Fails when the raw bytes hold the secret or any `length`-character piece of it. */
function expectNoPieceOf(bytes: Buffer, secret: string, length = 8): void {
  const text = bytes.toString('latin1');
  for (let start = 0; start + Math.min(length, secret.length) <= secret.length; start += 1) {
    const piece = secret.slice(start, start + Math.min(length, secret.length));
    expect(text.includes(piece), `stored bytes contain '${piece}' of the key`).toBe(false);
  }
}

const sha256 = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();

describe('keys at rest', () => {
  it('stores no piece of a key: not of a generated key beyond its display prefix, not of an operator key, not a short key whole', async () => {
    const dir = tempDataDir();
    const { db, keys } = openStore(dir);
    const generated = await keys.create({ name: 'generated' });
    const operator = await keys.ensure('operator-chosen-key-1234', 'env-1');
    const short = await keys.ensure('short-key1', 'env-2');
    expect(generated.record.prefix).toBe(generated.key.slice(0, 7));
    expect(operator.prefix).toBe('');
    expect(short.prefix).toBe('');
    for (const secret of [generated.key, 'operator-chosen-key-1234', 'short-key1']) {
      expect(await keys.verify(secret)).toBeDefined();
    }
    // While the server runs (write-ahead log in use) and after it stopped.
    for (const bytes of [rawBytes(dir), (db.close(), rawBytes(dir))]) {
      expectNoPieceOf(bytes, generated.key.slice(7));
      expectNoPieceOf(bytes, 'operator-chosen-key-1234');
      expectNoPieceOf(bytes, 'short-key1');
      for (const secret of [generated.key, 'operator-chosen-key-1234', 'short-key1']) {
        expect(bytes.includes(sha256(secret))).toBe(false);
      }
    }
  });

  it('verifies nothing with a database copied without its pepper, and refuses a pepper that is not its own', async () => {
    const dir = tempDataDir();
    const { db, keys } = openStore(dir);
    await keys.ensure('operator-chosen-key-1234', 'env-1');
    db.close();
    const copy = tempDataDir();
    mkdirSync(copy, { recursive: true });
    writeFileSync(path.join(copy, 'omnigate.sqlite'), readFileSync(path.join(dir, 'omnigate.sqlite')));
    const copied = openDatabase(path.join(copy, 'omnigate.sqlite'));
    open.push(copied);
    expect(() => createKeyStore(copied, { pepper: randomBytes(32) })).toThrow(/pepper .* does not match this database/);
    expect((await openStore(dir).keys.verify('operator-chosen-key-1234'))?.name).toBe('env-1');
  });

  it('creates the data directory 0700 and the database and pepper files 0600, tightening ones that exist', async () => {
    const created = tempDataDir();
    await openStore(created).keys.create({ name: 'a' });
    const existing = tempDataDir();
    mkdirSync(existing, { recursive: true, mode: 0o755 });
    chmodSync(existing, 0o755);
    for (const name of ['omnigate.sqlite', PEPPER_FILE]) {
      writeFileSync(path.join(existing, name), name === PEPPER_FILE ? randomBytes(32) : '', { mode: 0o644 });
      chmodSync(path.join(existing, name), 0o644);
    }
    await openStore(existing).keys.create({ name: 'b' });
    for (const dir of [created, existing]) {
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      for (const name of ['omnigate.sqlite', 'omnigate.sqlite-wal', 'omnigate.sqlite-shm', PEPPER_FILE]) {
        expect(statSync(path.join(dir, name)).mode & 0o777, name).toBe(0o600);
      }
    }
  });
});

describe('a database from before keyed hashes (plain SHA-256, 10-character prefixes)', () => {
  const GENERATED = `og-${'Q'.repeat(4)}${randomBytes(24).toString('base64url').slice(0, 28)}`;
  const ENV_KEY = 'og-env-key-one';
  const UNUSED_ENV_KEY = 'my-old-operator-key';

  /** Writes the database exactly as the previous version did. */
  function legacyDatabase(dir: string): void {
    mkdirSync(dir, { recursive: true });
    const db = new Database(path.join(dir, 'omnigate.sqlite'));
    db.pragma('journal_mode = WAL');
    db.exec(`CREATE TABLE api_keys (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, prefix TEXT NOT NULL, hash BLOB NOT NULL UNIQUE,
      allowed_models TEXT NOT NULL DEFAULT '[]', created_at INTEGER NOT NULL, revoked_at INTEGER)`);
    const insert = db.prepare(
      'INSERT INTO api_keys (id, name, prefix, hash, allowed_models, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    insert.run(
      'key_0000000000000001',
      'laptop',
      GENERATED.slice(0, 10),
      sha256(GENERATED),
      '["local:chat"]',
      1767225600,
    );
    insert.run('key_0000000000000002', 'env-1', ENV_KEY.slice(0, 10), sha256(ENV_KEY), '[]', 1767225601);
    insert.run('key_0000000000000003', 'old', UNUSED_ENV_KEY.slice(0, 10), sha256(UNUSED_ENV_KEY), '[]', 1767225602);
    db.close();
  }

  it('keeps every key working, cuts the stored prefixes at once and rehashes each key when it is next seen', async () => {
    const dir = tempDataDir();
    legacyDatabase(dir);
    const { db, keys } = openStore(dir);
    expect((await keys.list()).map((record) => [record.id, record.prefix])).toEqual([
      ['key_0000000000000001', GENERATED.slice(0, 7)],
      ['key_0000000000000002', ''],
      ['key_0000000000000003', ''],
    ]);
    expectNoPieceOf(rawBytes(dir), ENV_KEY);
    expectNoPieceOf(rawBytes(dir), GENERATED.slice(7));

    // As the server starts: the environment's key is registered again, and a call comes with the generated one.
    expect((await keys.ensure(ENV_KEY, 'env-1')).id).toBe('key_0000000000000002');
    expect(await keys.verify(GENERATED)).toMatchObject({
      id: 'key_0000000000000001',
      name: 'laptop',
      allowedModels: ['local:chat'],
    });
    const schemes = db.prepare('SELECT id, hash_scheme FROM api_keys ORDER BY id').all();
    expect(schemes).toEqual([
      { id: 'key_0000000000000001', hash_scheme: 'hmac-sha256' },
      { id: 'key_0000000000000002', hash_scheme: 'hmac-sha256' },
      { id: 'key_0000000000000003', hash_scheme: 'sha256' },
    ]);
    db.close();
    const bytes = rawBytes(dir);
    expect(bytes.includes(sha256(GENERATED))).toBe(false);
    expect(bytes.includes(sha256(ENV_KEY))).toBe(false);

    // Reopened: all three still verify (the unused one through its old hash, then rehashed).
    const again = openStore(dir).keys;
    expect(
      (await Promise.all([GENERATED, ENV_KEY, UNUSED_ENV_KEY].map((secret) => again.verify(secret)))).map(
        (record) => record?.id,
      ),
    ).toEqual(['key_0000000000000001', 'key_0000000000000002', 'key_0000000000000003']);
    expect(await again.verify('og-not-a-key')).toBeUndefined();
  });
});

describe('finding keys to revoke', () => {
  it('finds active keys by id or display prefix and refuses to revoke an ambiguous prefix', async () => {
    const dir = tempDataDir();
    const { keys } = openStore(dir);
    const first = (await keys.create({ name: 'first' })).record;
    const second = (await keys.create({ name: 'second' })).record;
    expect(await keys.find(first.id)).toEqual([first]);
    expect(await keys.find('og-')).toEqual([]);
    expect(await keys.find('')).toEqual([]);
    // Two keys that share a display prefix (likely enough with 4 characters) are both found.
    const { db } = openStore(dir);
    db.prepare('UPDATE api_keys SET prefix = ?').run('og-same');
    expect((await keys.find('og-same')).map((record) => record.id).sort()).toEqual([first.id, second.id].sort());
    expect(await keys.revoke('og-same')).toBe(false);
    expect((await keys.list()).every((record) => record.revokedAt === null)).toBe(true);
  });
});
