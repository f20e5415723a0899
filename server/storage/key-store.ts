/**
 * API keys. Only a SHA-256 hash of each key is stored; lookups hash the presented key and compare the
 * hashes in constant time. A key has a name and, optionally, the list of models it may use.
 *
 * Verified keys are cached in memory for a few seconds (a database read on every request was a measurable
 * share of the request cost). Revocation through this store takes effect at once; a revocation made by
 * another process on the same database (the keys CLI next to a running server) within the cache lifetime.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SqliteDatabase } from './database.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** First characters of the key, safe to show (`og-AbC…`). */
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
  /** Revokes by id or prefix; returns whether a key was revoked. */
  revoke(idOrPrefix: string): boolean;
  count(): number;
}

const KEY_PREFIX = 'og-';

function hashKey(secret: string): Buffer {
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

/** How long a verification result is reused, in milliseconds. */
export const KEY_CACHE_MS = 5_000;
const KEY_CACHE_MAX_ENTRIES = 10_000;

export function createKeyStore(db: SqliteDatabase, now: () => number = () => Math.floor(Date.now() / 1000), clock: () => number = Date.now): KeyStore {
  db.exec(`CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash BLOB NOT NULL UNIQUE,
    allowed_models TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  )`);
  const insert = db.prepare('INSERT INTO api_keys (id, name, prefix, hash, allowed_models, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const byHash = db.prepare<[Buffer], KeyRow>('SELECT * FROM api_keys WHERE hash = ?');
  const all = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const revokeStatement = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE (id = ? OR prefix = ?) AND revoked_at IS NULL');
  const countStatement = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL');

  // Keyed by the hash, never by the secret. Unknown keys are cached too, so a flood of bad keys costs no reads;
  // the size bound keeps that flood from growing memory.
  const verified = new Map<string, { record: ApiKeyRecord | undefined; expiresAt: number }>();

  function insertKey(secret: string, name: string, allowedModels: string[]): ApiKeyRecord {
    verified.clear();
    const id = `key_${randomBytes(8).toString('hex')}`;
    const prefix = secret.slice(0, 10);
    insert.run(id, name, prefix, hashKey(secret), JSON.stringify(allowedModels), now());
    return toRecord(byHash.get(hashKey(secret))!);
  }

  return {
    create({ name, allowedModels = [] }) {
      const key = KEY_PREFIX + randomBytes(24).toString('base64url');
      return { key, record: insertKey(key, name, allowedModels) };
    },
    ensure(secret, name) {
      const existing = byHash.get(hashKey(secret));
      return existing ? toRecord(existing) : insertKey(secret, name, []);
    },
    verify(secret) {
      const presented = hashKey(secret);
      const cacheKey = presented.toString('base64');
      const cached = verified.get(cacheKey);
      if (cached && cached.expiresAt > clock()) {
        return cached.record;
      }
      const row = byHash.get(presented);
      // The row was found by its hash; the constant-time comparison keeps the final equality check from
      // leaking timing about how much of the hash matched.
      const record = !row || !timingSafeEqual(row.hash, presented) || row.revoked_at !== null ? undefined : toRecord(row);
      if (verified.size >= KEY_CACHE_MAX_ENTRIES) {
        verified.clear();
      }
      verified.set(cacheKey, { record, expiresAt: clock() + KEY_CACHE_MS });
      return record;
    },
    list() {
      return all.all().map(toRecord);
    },
    revoke(idOrPrefix) {
      const revoked = revokeStatement.run(now(), idOrPrefix, idOrPrefix).changes > 0;
      if (revoked) {
        verified.clear();
      }
      return revoked;
    },
    count() {
      return countStatement.get()!.n;
    },
  };
}
