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
 * Every method reads or writes the database: requests are authenticated by the key cache (key-cache.ts), which
 * answers from memory and learns of changes through the KeyChangeFeed (key-change-feed.ts) this store publishes
 * its own writes to. On SQLite, triggers also count every change to api_keys in `api_keys_meta`, which is how a
 * change made by another process (the keys CLI next to a running server) reaches the server's cache
 * (sqlite-key-change-feed.ts).
 */
import { createHash, createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Limits } from '../core/limits.js';
import type { SqliteDatabase } from './database.js';
import type { KeyChange, KeyChangeFeed } from './key-change-feed.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** A generated key's first characters, safe to show (`og-AbCd`); '' for operator-chosen keys. */
  prefix: string;
  /** Model ids or aliases this key may use; empty means every model. */
  allowedModels: string[];
  createdAt: number;
  revokedAt: number | null;
  /** The project (a name) whose limits also apply to this key; null for none. */
  project?: string | null;
  /** The key's own limits, over the config's defaults; empty for none. */
  limits?: Limits;
  /** An admin key authenticates the admin API (like OMNIGATE_ADMIN_KEY) and nothing else. */
  admin?: boolean;
}

/** What a key's update may change; a field left out keeps its value. `limits` replaces the key's own limits. */
export interface KeyUpdate {
  name?: string;
  project?: string | null;
  limits?: Limits;
}

export interface NewKey {
  name: string;
  allowedModels?: string[];
  project?: string | null;
  limits?: Limits;
  admin?: boolean;
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
  project: string | null;
  limits: string;
  admin: number;
}

export interface KeyStore {
  /** Creates a key and returns its secret; the secret is never stored and cannot be shown again. */
  create(input: NewKey): Promise<{ key: string; record: ApiKeyRecord }>;
  /** The key with this id, revoked or not. */
  get(id: string): Promise<ApiKeyRecord | undefined>;
  /** Changes a key's name, project or limits; undefined when no key has this id. Announced on the change feed. */
  update(id: string, change: KeyUpdate): Promise<ApiKeyRecord | undefined>;
  /** Registers a known secret (from OMNIGATE_API_KEYS); idempotent. */
  ensure(secret: string, name: string): Promise<ApiKeyRecord>;
  /** The active key matching `secret`, or undefined: a database read every time (the key cache is in front). */
  verify(secret: string): Promise<ApiKeyRecord | undefined>;
  /** Every key, revoked ones included, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  /** The active keys whose id or (non-empty) display prefix is `idOrPrefix`. */
  find(idOrPrefix: string): Promise<ApiKeyRecord[]>;
  /** Revokes the one active key `find` gives; false when none or several match. */
  revoke(idOrPrefix: string): Promise<boolean>;
  count(): Promise<number>;
}

export interface KeyStoreOptions {
  /** The HMAC key (pepper.ts). Required for a database file; an in-memory database gets a random one. */
  pepper?: Buffer;
  /** Unix seconds, for created_at and revoked_at. */
  now?: () => number;
  /** Where this store announces its writes (the key caches of this process hear them at once). */
  changes?: KeyChangeFeed;
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
    project: row.project ?? null,
    limits: JSON.parse(row.limits ?? '{}') as Limits,
    admin: row.admin === 1,
  };
}

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
  // Limits per key (issue 30): absent from databases written before them, and then empty.
  if (!columns.some((column) => column.name === 'project')) {
    db.exec(`ALTER TABLE api_keys ADD COLUMN project TEXT;
      ALTER TABLE api_keys ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE api_keys ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;`);
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
  // A KeyObject made once: an HMAC keyed with a Buffer copies and wraps the key on every call (~1.4 µs of 3).
  const hmacKey = createSecretKey(pepper);
  const hashKey = (secret: string) => createHmac('sha256', hmacKey).update(secret, 'utf8').digest();
  migrate(db, hashKey(PEPPER_CHECK_INPUT));

  const insert = db.prepare(
    `INSERT INTO api_keys (id, name, prefix, hash, hash_scheme, allowed_models, created_at, project, limits, admin) VALUES (?, ?, ?, ?, '${HMAC_SCHEME}', ?, ?, ?, ?, ?)`,
  );
  const byId = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
  const updateStatement = db.prepare('UPDATE api_keys SET name = ?, project = ?, limits = ? WHERE id = ?');
  const byHash = db.prepare<[Buffer, string], KeyRow>('SELECT * FROM api_keys WHERE hash = ? AND hash_scheme = ?');
  const rehash = db.prepare(`UPDATE api_keys SET hash = ?, hash_scheme = '${HMAC_SCHEME}', prefix = ? WHERE id = ?`);
  const all = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const active = db.prepare<[string, string], KeyRow>(
    "SELECT * FROM api_keys WHERE (id = ? OR (prefix <> '' AND prefix = ?)) AND revoked_at IS NULL ORDER BY created_at, id",
  );
  const revokeStatement = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const countStatement = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL');
  const publish = async (change: KeyChange) => {
    await options.changes?.publish(change);
  };

  /** The row of `secret`, rehashing it first when it is still stored under the legacy scheme. */
  function findRow(secret: string, hash: Buffer): KeyRow | undefined {
    const row = byHash.get(hash, HMAC_SCHEME);
    if (row) {
      return row;
    }
    // Only a miss looks for a legacy row (one more indexed read); the key cache keeps misses from repeating.
    const legacy = byHash.get(legacyHash(secret), LEGACY_SCHEME);
    if (!legacy) {
      return undefined;
    }
    // The same key under a new hash: no change to announce (what the key may do is unchanged).
    rehash.run(hash, displayPrefix(secret), legacy.id);
    return byHash.get(hash, HMAC_SCHEME);
  }

  function insertKey(secret: string, input: NewKey): ApiKeyRecord {
    const id = `key_${randomBytes(8).toString('hex')}`;
    insert.run(
      id,
      input.name,
      displayPrefix(secret),
      hashKey(secret),
      JSON.stringify(input.allowedModels ?? []),
      now(),
      input.project ?? null,
      JSON.stringify(input.limits ?? {}),
      input.admin ? 1 : 0,
    );
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
    async create(input) {
      const key = KEY_PREFIX + randomBytes(24).toString('base64url');
      const record = insertKey(key, input);
      await publish({ kind: 'created', keyId: record.id });
      return { key, record };
    },
    async ensure(secret, name) {
      const existing = findRow(secret, hashKey(secret));
      if (existing) {
        return toRecord(existing);
      }
      const record = insertKey(secret, { name });
      await publish({ kind: 'created', keyId: record.id });
      return record;
    },
    async verify(secret) {
      const presented = hashKey(secret);
      const row = findRow(secret, presented);
      // The row was found by its hash; the constant-time comparison keeps the final equality check from
      // leaking timing about how much of the hash matched.
      return !row || !timingSafeEqual(row.hash, presented) || row.revoked_at !== null ? undefined : toRecord(row);
    },
    async list() {
      return all.all().map(toRecord);
    },
    async get(id) {
      const row = byId.get(id);
      return row ? toRecord(row) : undefined;
    },
    async update(id, change) {
      const row = byId.get(id);
      if (!row) {
        return undefined;
      }
      const current = toRecord(row);
      updateStatement.run(
        change.name ?? current.name,
        change.project === undefined ? (current.project ?? null) : change.project,
        JSON.stringify(change.limits ?? current.limits ?? {}),
        id,
      );
      // Every instance drops what it held for the key, so the new limits apply from its next call.
      await publish({ kind: 'updated', keyId: id });
      return toRecord(byId.get(id)!);
    },
    async find(idOrPrefix) {
      return find(idOrPrefix);
    },
    async revoke(idOrPrefix) {
      const matches = find(idOrPrefix);
      const [match] = matches;
      const revoked = matches.length === 1 && match !== undefined && revokeStatement.run(now(), match.id).changes > 0;
      if (revoked) {
        await publish({ kind: 'revoked', keyId: match.id });
      }
      return revoked;
    },
    async count() {
      return countStatement.get()!.n;
    },
  };
}
