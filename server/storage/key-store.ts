/**
 * API keys. A key is stored as HMAC-SHA256 under the data directory's pepper (pepper.ts), never in a form that
 * gives it back: without the pepper file a copied database cannot even be used to test guesses. Lookups hash
 * the presented key and compare the hashes in constant time. Besides the hash a row keeps a display prefix, only
 * for keys this store generated (`og-` and 4 of their 32 random characters); operator-chosen keys have none.
 * A key has a name and, optionally, the list of models it may use.
 *
 * Databases written before keyed hashes (`hash_scheme` 'sha256': plain SHA-256 and the key's first 10
 * characters) are migrated without losing a key: the prefixes are cut at open, and each row is rehashed when its
 * key is next seen (registered again from OMNIGATE_API_KEYS, or presented by a client).
 *
 * Verified keys are cached in memory (a database read on every request was a measurable share of the request
 * cost). Triggers count every change to api_keys in `api_keys_meta`; verification reads that one counter and
 * drops the cache when it moved, so a key created or revoked by any connection, also the keys CLI next to a
 * running server, takes effect within KEY_CHANGES_CHECK_MS. The counter is read at most that often: even
 * that one-row read was ~2% of a request under load (each read opens a WAL read transaction). Changes made
 * through this store take effect at once.
 */
import { createHash, createHmac, createSecretKey, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SqliteDatabase } from './database.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** A generated key's first characters, safe to show (`og-AbCd`); '' for operator-chosen keys. */
  prefix: string;
  /** Model ids or aliases this key may use; empty means every model. */
  allowedModels: string[];
  createdAt: number;
  revokedAt: number | null;
}

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  hash: Buffer;
  hash_scheme: string;
  allowed_models: string;
  created_at: number;
  revoked_at: number | null;
}

export interface KeyStore {
  /** Creates a key and returns its secret; the secret is never stored and cannot be shown again. */
  create(input: { name: string; allowedModels?: string[] }): { key: string; record: ApiKeyRecord };
  /** Registers a known secret (from OMNIGATE_API_KEYS); idempotent. */
  ensure(secret: string, name: string): ApiKeyRecord;
  /** The active key matching `secret`, or undefined. */
  verify(secret: string): ApiKeyRecord | undefined;
  list(): ApiKeyRecord[];
  /** The active keys whose id or (non-empty) display prefix is `idOrPrefix`. */
  find(idOrPrefix: string): ApiKeyRecord[];
  /** Revokes the one active key `find` gives; false when none or several match. */
  revoke(idOrPrefix: string): boolean;
  count(): number;
}

export interface KeyStoreOptions {
  /** The HMAC key (pepper.ts). Required for a database file; an in-memory database gets a random one. */
  pepper?: Buffer;
  /** Unix seconds, for created_at and revoked_at. */
  now?: () => number;
  /** Milliseconds of a monotonic clock, for KEY_CHANGES_CHECK_MS (tests move it). */
  clock?: () => number;
}

const KEY_PREFIX = 'og-';
const GENERATED_KEY = /^og-[A-Za-z0-9_-]{32}$/;
/** `og-` and 4 random characters: enough to tell keys apart in a list, 24 of a generated key's 192 bits. */
const DISPLAY_PREFIX_LENGTH = 7;
const HMAC_SCHEME = 'hmac-sha256';
const LEGACY_SCHEME = 'sha256';
/** Stored to recognise the pepper the hashes were made with; an HMAC of a constant reveals nothing of it. */
const PEPPER_CHECK_INPUT = 'omnigate pepper check';

/** Only the shape of a generated key earns a display prefix; any other key could be short or guessable. */
function displayPrefix(secret: string): string {
  return GENERATED_KEY.test(secret) ? secret.slice(0, DISPLAY_PREFIX_LENGTH) : '';
}

function legacyHash(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    allowedModels: JSON.parse(row.allowed_models) as string[],
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

const KEY_CACHE_MAX_ENTRIES = 10_000;
/** How stale the cache may be after another process (the keys CLI) changed a key. */
export const KEY_CHANGES_CHECK_MS = 50;

function migrate(db: SqliteDatabase, pepperCheck: Buffer): void {
  db.exec(`CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash BLOB NOT NULL UNIQUE,
    allowed_models TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE TABLE IF NOT EXISTS api_keys_meta (name TEXT PRIMARY KEY, value ANY NOT NULL);
  INSERT OR IGNORE INTO api_keys_meta (name, value) VALUES ('changes', 0);
  CREATE TRIGGER IF NOT EXISTS api_keys_inserted AFTER INSERT ON api_keys
    BEGIN UPDATE api_keys_meta SET value = value + 1 WHERE name = 'changes'; END;
  CREATE TRIGGER IF NOT EXISTS api_keys_updated AFTER UPDATE ON api_keys
    BEGIN UPDATE api_keys_meta SET value = value + 1 WHERE name = 'changes'; END;
  CREATE TRIGGER IF NOT EXISTS api_keys_deleted AFTER DELETE ON api_keys
    BEGIN UPDATE api_keys_meta SET value = value + 1 WHERE name = 'changes'; END;`);
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(api_keys)').all();
  if (!columns.some((column) => column.name === 'hash_scheme')) {
    // Rows from before this column hold plain SHA-256 hashes.
    db.exec(`ALTER TABLE api_keys ADD COLUMN hash_scheme TEXT NOT NULL DEFAULT '${LEGACY_SCHEME}'`);
  }
  const stored = db.prepare<[], { value: Buffer }>("SELECT value FROM api_keys_meta WHERE name = 'pepper_check'").get();
  if (!stored) {
    db.prepare("INSERT INTO api_keys_meta (name, value) VALUES ('pepper_check', ?)").run(pepperCheck);
  } else if (!Buffer.isBuffer(stored.value) || !timingSafeEqual(stored.value, pepperCheck)) {
    throw new Error(
      'the key pepper (omnigate.pepper) does not match this database: the keys were hashed with another; restore the pepper file that belongs to this database',
    );
  }
  // Legacy prefixes are the key's first 10 characters: all of a short key. Keep a display prefix only where the
  // key was generated (the shape fits, and the row was not registered from OMNIGATE_API_KEYS as `env-N`). The
  // rewrite is zeroed on disk (secure_delete) and the log truncated, so the old bytes are gone at once.
  const legacy = db
    .prepare<[], { id: string; name: string; prefix: string }>(
      `SELECT id, name, prefix FROM api_keys WHERE hash_scheme = '${LEGACY_SCHEME}' AND length(prefix) > ${DISPLAY_PREFIX_LENGTH}`,
    )
    .all();
  if (legacy.length > 0) {
    const cut = db.prepare('UPDATE api_keys SET prefix = ? WHERE id = ?');
    db.transaction(() => {
      for (const row of legacy) {
        const generated = /^og-[A-Za-z0-9_-]{7}$/.test(row.prefix) && !/^env-\d+$/.test(row.name);
        cut.run(generated ? row.prefix.slice(0, DISPLAY_PREFIX_LENGTH) : '', row.id);
      }
    })();
    if (!db.memory) {
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
  }
}

export function createKeyStore(db: SqliteDatabase, options: KeyStoreOptions = {}): KeyStore {
  const pepper = options.pepper ?? (db.memory ? randomBytes(32) : undefined);
  if (!pepper) {
    throw new Error('createKeyStore: a database file needs the pepper of its data directory (loadPepper)');
  }
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const clock = options.clock ?? (() => performance.now());
  // A KeyObject made once: an HMAC keyed with a Buffer copies and wraps the key on every call (~1.4 µs of 3).
  const hmacKey = createSecretKey(pepper);
  const hashKey = (secret: string) => createHmac('sha256', hmacKey).update(secret, 'utf8').digest();
  migrate(db, hashKey(PEPPER_CHECK_INPUT));

  const insert = db.prepare(
    `INSERT INTO api_keys (id, name, prefix, hash, hash_scheme, allowed_models, created_at) VALUES (?, ?, ?, ?, '${HMAC_SCHEME}', ?, ?)`,
  );
  const byHash = db.prepare<[Buffer, string], KeyRow>('SELECT * FROM api_keys WHERE hash = ? AND hash_scheme = ?');
  const rehash = db.prepare(`UPDATE api_keys SET hash = ?, hash_scheme = '${HMAC_SCHEME}', prefix = ? WHERE id = ?`);
  const anyLegacy = db
    .prepare<[], number>(`SELECT EXISTS (SELECT 1 FROM api_keys WHERE hash_scheme = '${LEGACY_SCHEME}')`)
    .pluck();
  const all = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const active = db.prepare<[string, string], KeyRow>(
    "SELECT * FROM api_keys WHERE (id = ? OR (prefix <> '' AND prefix = ?)) AND revoked_at IS NULL ORDER BY created_at, id",
  );
  const revokeStatement = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const countStatement = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL');
  const changes = db.prepare<[], number>("SELECT value FROM api_keys_meta WHERE name = 'changes'").pluck();

  // Keyed by a digest, never by the secret. Unknown keys are cached too, so a flood of bad keys costs no reads;
  // the size bound keeps that flood from growing memory.
  const verified = new Map<string, ApiKeyRecord | undefined>();
  // The cache's digest is SHA-256 over the pepper and the presented key in one one-shot call, not the HMAC: an
  // HMAC builds and frees an Hmac object and looks its digest up by name in OpenSSL, ~2 µs alone but ~12 µs of a
  // request under load, where that code runs cold (bench/README.md, fifth pass). Keyed by the pepper like the
  // stored hashes, so what the map holds cannot test a guess without the pepper file either.
  const cachePrefix = pepper.toString('base64');
  const cacheKeyOf = (secret: string) => hash('sha256', cachePrefix + secret, 'base64');
  let seenChanges = -1;
  let checkedAt = -Infinity;
  let legacyRows = false;

  /** Drops the cache when any connection changed api_keys since the last look: one indexed read of one row. */
  function refresh(): void {
    const at = clock();
    if (at - checkedAt < KEY_CHANGES_CHECK_MS) {
      return;
    }
    checkedAt = at;
    const current = changes.get()!;
    if (current !== seenChanges) {
      verified.clear();
      seenChanges = current;
      legacyRows = anyLegacy.get() === 1;
    }
  }

  /** After a write of this store's own: the next verification looks at the counter, whenever it last did. */
  function changed(): void {
    checkedAt = -Infinity;
  }

  /** The row of `secret`, rehashing it first when it is still stored under the legacy scheme. */
  function findRow(secret: string, hash: Buffer): KeyRow | undefined {
    const row = byHash.get(hash, HMAC_SCHEME);
    if (row || !legacyRows) {
      return row;
    }
    const legacy = byHash.get(legacyHash(secret), LEGACY_SCHEME);
    if (!legacy) {
      return undefined;
    }
    rehash.run(hash, displayPrefix(secret), legacy.id);
    changed();
    return byHash.get(hash, HMAC_SCHEME);
  }

  function insertKey(secret: string, name: string, allowedModels: string[]): ApiKeyRecord {
    const id = `key_${randomBytes(8).toString('hex')}`;
    insert.run(id, name, displayPrefix(secret), hashKey(secret), JSON.stringify(allowedModels), now());
    changed();
    return toRecord(byHash.get(hashKey(secret), HMAC_SCHEME)!);
  }

  /** Active keys by id or display prefix, or else by the whole secret (what one pastes when a key leaks). */
  function find(idOrPrefixOrSecret: string): ApiKeyRecord[] {
    if (idOrPrefixOrSecret === '') {
      return [];
    }
    const rows = active.all(idOrPrefixOrSecret, idOrPrefixOrSecret);
    if (rows.length === 0) {
      const row = findRow(idOrPrefixOrSecret, hashKey(idOrPrefixOrSecret));
      if (row && row.revoked_at === null) {
        rows.push(row);
      }
    }
    return rows.map(toRecord);
  }

  return {
    create({ name, allowedModels = [] }) {
      const key = KEY_PREFIX + randomBytes(24).toString('base64url');
      return { key, record: insertKey(key, name, allowedModels) };
    },
    ensure(secret, name) {
      refresh();
      const existing = findRow(secret, hashKey(secret));
      return existing ? toRecord(existing) : insertKey(secret, name, []);
    },
    verify(secret) {
      refresh();
      const cacheKey = cacheKeyOf(secret);
      if (verified.has(cacheKey)) {
        return verified.get(cacheKey);
      }
      const presented = hashKey(secret);
      const row = findRow(secret, presented);
      // The row was found by its hash; the constant-time comparison keeps the final equality check from
      // leaking timing about how much of the hash matched.
      const record =
        !row || !timingSafeEqual(row.hash, presented) || row.revoked_at !== null ? undefined : toRecord(row);
      if (verified.size >= KEY_CACHE_MAX_ENTRIES) {
        verified.clear();
      }
      verified.set(cacheKey, record);
      return record;
    },
    list() {
      return all.all().map(toRecord);
    },
    find,
    revoke(idOrPrefix) {
      const matches = find(idOrPrefix);
      const revoked = matches.length === 1 && revokeStatement.run(now(), matches[0].id).changes > 0;
      changed();
      return revoked;
    },
    count() {
      return countStatement.get()!.n;
    },
  };
}
