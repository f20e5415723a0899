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
import type { Limits } from '../../core/limits.js';
import type { ApiKeyRecord, KeyStore, NewKey } from '../key-store.js';
import { type PgPool, query } from './pool.js';

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  hash: Buffer;
  allowed_models: string[];
  created_at: number;
  revoked_at: number | null;
  project: string | null;
  limits: Limits;
  admin: boolean;
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
    project: row.project,
    limits: row.limits ?? {},
    admin: row.admin,
  };
}

/** Stores the pepper's check on first start; throws when the database's keys were hashed under another pepper. */
export async function checkPepper(pool: PgPool, pepper: Buffer): Promise<void> {
  const check = createHmac('sha256', pepper).update(PEPPER_CHECK_INPUT, 'utf8').digest();
  await query(pool, "INSERT INTO omnigate_meta (name, value) VALUES ('pepper_check', $1) ON CONFLICT DO NOTHING", [
    check,
  ]);
  const { rows } = await query<{ value: Buffer }>(pool, "SELECT value FROM omnigate_meta WHERE name = 'pepper_check'");
  const [row] = rows;
  if (rows.length !== 1 || row === undefined || !timingSafeEqual(row.value, check)) {
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

  async function insertKey(secret: string, input: NewKey): Promise<ApiKeyRecord> {
    const id = `key_${randomBytes(8).toString('hex')}`;
    const { rows } = await query<KeyRow>(
      pool,
      `INSERT INTO api_keys (id, name, prefix, hash, allowed_models, created_at, project, limits, admin)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (hash) DO UPDATE SET hash = EXCLUDED.hash RETURNING *`,
      [
        id,
        input.name,
        displayPrefix(secret),
        hashKey(secret),
        JSON.stringify(input.allowedModels ?? []),
        now(),
        input.project ?? null,
        JSON.stringify(input.limits ?? {}),
        input.admin ?? false,
      ],
    );
    const record = toRecord(rows[0]!); // ON CONFLICT DO UPDATE … RETURNING returns the row either way
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
    async create(input) {
      const key = KEY_PREFIX + randomBytes(24).toString('base64url');
      return { key, record: await insertKey(key, input) };
    },
    async ensure(secret, name) {
      const existing = await byHash(hashKey(secret));
      return existing ? toRecord(existing) : insertKey(secret, { name });
    },
    async get(id) {
      const { rows } = await query<KeyRow>(pool, 'SELECT * FROM api_keys WHERE id = $1', [id]);
      return rows[0] ? toRecord(rows[0]) : undefined;
    },
    async update(id, change) {
      // One statement: a field not given keeps its stored value (COALESCE), the project may be set to null.
      const { rows } = await query<KeyRow>(
        pool,
        `UPDATE api_keys SET name = COALESCE($2, name),
           project = CASE WHEN $3::boolean THEN $4 ELSE project END,
           limits = COALESCE($5::jsonb, limits)
         WHERE id = $1 RETURNING *`,
        [
          id,
          change.name ?? null,
          change.project !== undefined,
          change.project ?? null,
          change.limits ? JSON.stringify(change.limits) : null,
        ],
      );
      if (!rows[0]) {
        return undefined;
      }
      // The table's trigger tells the other instances; this process's caches hear it here at once.
      await publish({ kind: 'updated', keyId: id });
      return toRecord(rows[0]);
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
      const [match] = matches;
      const revoked =
        matches.length === 1 &&
        match !== undefined &&
        (
          await query(pool, 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [
            now(),
            match.id,
          ])
        ).rowCount === 1;
      if (revoked) {
        await publish({ kind: 'revoked', keyId: match.id });
      }
      return revoked;
    },
    async count() {
      const { rows } = await query<{ n: number }>(pool, 'SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL');
      return rows[0]!.n; // count(*) returns one row
    },
  };
}
