/**
 * API keys on PostgreSQL: the same rows and rules as the SQLite store (HMAC-SHA256 under the pepper, display
 * prefixes only for generated keys, revocation by id, prefix or whole secret). Every method reads or writes the
 * database; requests are authenticated by the key cache (../key-cache.ts) in front, which hears of changes
 * through the key change feed: this store publishes its own writes there (this process's caches hear them at
 * once) and the table's trigger notifies every other instance (key-change-feed.ts).
 *
 * The pepper's check lives in `omnigate_meta`, so an instance started with another pepper than the one the
 * keys were hashed with is refused at start instead of refusing every key.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyChange, KeyChangeFeed } from '../key-change-feed.js';
import type { ApiKeyRecord, KeyStore } from '../key-store.js';
import { type PgPool, query } from './pool.js';

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  hash: Buffer;
  allowed_models: string[];
  created_at: number;
  revoked_at: number | null;
}

const KEY_PREFIX = 'og-';
const GENERATED_KEY = /^og-[A-Za-z0-9_-]{32}$/;
const DISPLAY_PREFIX_LENGTH = 7;
const PEPPER_CHECK_INPUT = 'omnigate pepper check';

function displayPrefix(secret: string): string {
  return GENERATED_KEY.test(secret) ? secret.slice(0, DISPLAY_PREFIX_LENGTH) : '';
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    allowedModels: row.allowed_models,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

/** Stores the pepper's check on first start; throws when the database's keys were hashed under another pepper. */
export async function checkPepper(pool: PgPool, pepper: Buffer): Promise<void> {
  const check = createHmac('sha256', pepper).update(PEPPER_CHECK_INPUT, 'utf8').digest();
  await query(pool, "INSERT INTO omnigate_meta (name, value) VALUES ('pepper_check', $1) ON CONFLICT DO NOTHING", [
    check,
  ]);
  const { rows } = await query<{ value: Buffer }>(pool, "SELECT value FROM omnigate_meta WHERE name = 'pepper_check'");
  if (rows.length !== 1 || !timingSafeEqual(rows[0].value, check)) {
    throw new Error(
      'the key pepper does not match this PostgreSQL database: its keys were hashed with another; give every instance the same pepper (OMNIGATE_PEPPER_FILE, or the omnigate.pepper of the first instance)',
    );
  }
}

export function createPostgresKeyStore(
  pool: PgPool,
  options: { pepper: Buffer; now?: () => number; changes?: KeyChangeFeed },
): KeyStore {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const hmacKey = createSecretKey(options.pepper);
  const hashKey = (secret: string) => createHmac('sha256', hmacKey).update(secret, 'utf8').digest();
  const publish = async (change: KeyChange) => {
    await options.changes?.publish(change);
  };

  async function byHash(digest: Buffer): Promise<KeyRow | undefined> {
    const { rows } = await query<KeyRow>(pool, 'SELECT * FROM api_keys WHERE hash = $1', [digest]);
    return rows[0];
  }

  async function insertKey(secret: string, name: string, allowedModels: string[]): Promise<ApiKeyRecord> {
    const id = `key_${randomBytes(8).toString('hex')}`;
    const { rows } = await query<KeyRow>(
      pool,
      `INSERT INTO api_keys (id, name, prefix, hash, allowed_models, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (hash) DO UPDATE SET hash = EXCLUDED.hash RETURNING *`,
      [id, name, displayPrefix(secret), hashKey(secret), JSON.stringify(allowedModels), now()],
    );
    const record = toRecord(rows[0]);
    await publish({ kind: 'created', keyId: record.id });
    return record;
  }

  async function find(idOrPrefixOrSecret: string): Promise<ApiKeyRecord[]> {
    if (idOrPrefixOrSecret === '') {
      return [];
    }
    const { rows } = await query<KeyRow>(
      pool,
      "SELECT * FROM api_keys WHERE (id = $1 OR (prefix <> '' AND prefix = $1)) AND revoked_at IS NULL ORDER BY created_at, id",
      [idOrPrefixOrSecret],
    );
    if (rows.length === 0) {
      const row = await byHash(hashKey(idOrPrefixOrSecret));
      if (row && row.revoked_at === null) {
        rows.push(row);
      }
    }
    return rows.map(toRecord);
  }

  return {
    async create({ name, allowedModels = [] }) {
      const key = KEY_PREFIX + randomBytes(24).toString('base64url');
      return { key, record: await insertKey(key, name, allowedModels) };
    },
    async ensure(secret, name) {
      const existing = await byHash(hashKey(secret));
      return existing ? toRecord(existing) : insertKey(secret, name, []);
    },
    async verify(secret) {
      const presented = hashKey(secret);
      const row = await byHash(presented);
      // Found by its hash; the constant-time comparison keeps the final check from leaking how much matched.
      return !row || !timingSafeEqual(row.hash, presented) || row.revoked_at !== null ? undefined : toRecord(row);
    },
    async list() {
      const { rows } = await query<KeyRow>(pool, 'SELECT * FROM api_keys ORDER BY created_at, id');
      return rows.map(toRecord);
    },
    find,
    async revoke(idOrPrefix) {
      const matches = await find(idOrPrefix);
      const revoked =
        matches.length === 1 &&
        (
          await query(pool, 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [
            now(),
            matches[0].id,
          ])
        ).rowCount === 1;
      if (revoked) {
        await publish({ kind: 'revoked', keyId: matches[0].id });
      }
      return revoked;
    },
    async count() {
      const { rows } = await query<{ n: number }>(pool, 'SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL');
      return rows[0].n;
    },
  };
}
