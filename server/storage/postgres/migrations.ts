/**
 * The PostgreSQL schema as numbered migrations, applied in order at start. Instances starting together take a
 * session advisory lock first, so exactly one applies what is missing while the others wait and then find
 * nothing left to do. `schema_migrations` records each applied version; a database holding a version this code
 * does not know (written by a newer release) is refused, since this code would misread its tables.
 *
 * The migrations live in code, not in .sql files beside it, so the built server carries them without a copy
 * step. A migration, once released, is never edited: a change is a new entry.
 */
import type pg from 'pg';
import type { PgPool } from './pool.js';
import { unavailable } from './pool.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Any fixed number, the same in every release: the lock that serialises migrations. */
const MIGRATION_LOCK = 0x6f6d6e69; // 'omni'

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'stores',
    sql: `
CREATE TABLE omnigate_meta (name TEXT PRIMARY KEY, value BYTEA NOT NULL);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  hash BYTEA NOT NULL UNIQUE,
  hash_scheme TEXT NOT NULL DEFAULT 'hmac-sha256',
  allowed_models JSONB NOT NULL DEFAULT '[]',
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX api_keys_by_prefix ON api_keys (prefix) WHERE prefix <> '';
-- Every change to a key is announced to every instance (key-change-feed.ts), by the database itself, so a
-- change made by hand or by another release is heard too. The payload is a KeyChange of the key-change feed.
CREATE FUNCTION api_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  change_kind TEXT;
  key_id TEXT;
BEGIN
  IF TG_OP = 'INSERT' THEN
    change_kind := 'created';
    key_id := NEW.id;
  ELSIF TG_OP = 'DELETE' THEN
    change_kind := 'revoked';
    key_id := OLD.id;
  ELSE
    change_kind := CASE WHEN OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN 'revoked' ELSE 'updated' END;
    key_id := NEW.id;
  END IF;
  PERFORM pg_notify('omnigate_api_keys', json_build_object('kind', change_kind, 'keyId', key_id)::text);
  RETURN NULL;
END $$;
CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_notify();

CREATE TABLE usage_records (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  request_id TEXT NOT NULL,
  key_id TEXT,
  operation TEXT NOT NULL,
  model_requested TEXT,
  model TEXT,
  provider TEXT,
  input_tokens BIGINT NOT NULL DEFAULT 0,
  output_tokens BIGINT NOT NULL DEFAULT 0,
  cached_input_tokens BIGINT NOT NULL DEFAULT 0,
  cache_write_tokens BIGINT NOT NULL DEFAULT 0,
  reasoning_tokens BIGINT NOT NULL DEFAULT 0,
  units DOUBLE PRECISION,
  media JSONB,
  status INTEGER NOT NULL,
  latency_ms BIGINT NOT NULL,
  created_at BIGINT NOT NULL
) PARTITION BY RANGE (created_at);
CREATE INDEX usage_by_key ON usage_records (key_id, seq);
CREATE INDEX usage_by_request ON usage_records (request_id);
CREATE INDEX usage_by_time ON usage_records (created_at);

CREATE TABLE responses (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  response TEXT NOT NULL,
  conversation TEXT NOT NULL,
  input_items TEXT
);
CREATE INDEX responses_created_at ON responses (created_at);
CREATE TABLE response_items (
  key_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  response_id TEXT NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
  item TEXT NOT NULL,
  PRIMARY KEY (key_id, item_id)
);
CREATE INDEX response_items_response_id ON response_items (response_id);

CREATE TABLE files (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key_id TEXT NOT NULL,
  blob_id TEXT NOT NULL,
  filename TEXT NOT NULL,
  purpose TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  sha256 TEXT NOT NULL,
  media_type TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  index_status TEXT,
  index_reason TEXT,
  index_code TEXT
);
CREATE INDEX files_by_key ON files (key_id, seq);
CREATE INDEX files_by_expiry ON files (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE search_passages (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  file_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  indexed_at BIGINT NOT NULL,
  document TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', regexp_replace(title, '[^[:alnum:]]+', ' ', 'g')), 'A') ||
    setweight(to_tsvector('english', regexp_replace(body, '[^[:alnum:]]+', ' ', 'g')), 'D')
  ) STORED
);
CREATE INDEX search_passages_file ON search_passages (file_id);
CREATE INDEX search_passages_document ON search_passages USING GIN (document);
CREATE INDEX search_passages_key ON search_passages (key_id);

CREATE SEQUENCE video_claim_order;
CREATE TABLE video_tasks (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt TEXT NOT NULL,
  seconds INTEGER NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  input_blob TEXT,
  status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
  progress INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  run_after BIGINT NOT NULL,
  claimed_by TEXT,
  lease_until BIGINT,
  checkpoint TEXT,
  video_blob TEXT,
  thumbnail_blob TEXT,
  error_code TEXT,
  error_message TEXT,
  created_at BIGINT NOT NULL,
  completed_at BIGINT,
  expires_at BIGINT,
  claim_order BIGINT
);
CREATE INDEX video_tasks_by_key ON video_tasks (key_id, seq);
CREATE INDEX video_tasks_runnable ON video_tasks (status, run_after) WHERE status IN ('queued', 'processing');
CREATE INDEX video_tasks_key_claims ON video_tasks (key_id, claim_order);
CREATE INDEX video_tasks_active_by_key ON video_tasks (key_id, status) WHERE status IN ('queued', 'processing');
CREATE TABLE video_remixes (video_id TEXT PRIMARY KEY, remixed_from TEXT NOT NULL);

CREATE TABLE blobs (
  id TEXT PRIMARY KEY,
  media_type TEXT NOT NULL,
  size BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  key_id TEXT
);
CREATE INDEX blobs_by_expiry ON blobs (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX blobs_by_owner ON blobs (key_id) WHERE key_id IS NOT NULL;
`,
  },
  {
    // The retry layer's columns (providers/resilience/): null on rows of calls it did not run.
    version: 2,
    name: 'usage-deployment-attempts',
    sql: 'ALTER TABLE usage_records ADD COLUMN deployment TEXT, ADD COLUMN attempts INTEGER;',
  },
  {
    // What each call cost (limits/prices.ts); rows written before prices existed read as 0.
    version: 3,
    name: 'usage-cost',
    sql: 'ALTER TABLE usage_records ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;',
  },
  {
    // Limits per key and per project, admin keys (issue 30). A change to a project is announced on the key
    // change feed's channel as a notice naming no key ('project'), which every instance reads as "re-read":
    // the project caches reload their projects (project-store.ts).
    version: 4,
    name: 'key-limits-projects',
    sql: `
ALTER TABLE api_keys ADD COLUMN project TEXT, ADD COLUMN limits JSONB NOT NULL DEFAULT '{}',
  ADD COLUMN admin BOOLEAN NOT NULL DEFAULT false;
CREATE TABLE projects (
  name TEXT PRIMARY KEY,
  limits JSONB NOT NULL DEFAULT '{}',
  created_at BIGINT NOT NULL
);
CREATE FUNCTION projects_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('omnigate_api_keys', json_build_object('kind', 'project')::text);
  RETURN NULL;
END $$;
CREATE TRIGGER projects_changed AFTER INSERT OR UPDATE OR DELETE ON projects
  FOR EACH ROW EXECUTE FUNCTION projects_notify();
`,
  },
  {
    // A file's indexing lease (storage/file-store.ts): an instance starting takes over only the rows whose
    // indexer stopped renewing it, never another live instance's. Rows left without one are taken at once.
    version: 5,
    name: 'files-indexing-lease',
    sql: 'ALTER TABLE files ADD COLUMN index_lease_until BIGINT;',
  },
  {
    // Semantic search (search.embedding_model): one vector per passage, little-endian float32 bytes, with the
    // model that made it, so a change of model re-embeds. No pgvector: cosine is computed by the server.
    version: 6,
    name: 'search-passage-vectors',
    sql: `
CREATE TABLE search_passage_vectors (
  passage_id BIGINT PRIMARY KEY REFERENCES search_passages (id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  vector BYTEA NOT NULL
);`,
  },
  {
    // Who embeds a passage (search-index.ts): a claim until `until_ms` (ms since the epoch), so the workers of
    // `--workers N` and the instances on this database embed each passage once; an expired claim is taken over.
    version: 7,
    name: 'search-passage-embed-claims',
    sql: `
CREATE TABLE search_passage_embed_claims (
  passage_id BIGINT PRIMARY KEY REFERENCES search_passages (id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  until_ms BIGINT NOT NULL
);`,
  },
  {
    // A search answer's search step through a model with deployments: where it ran and the attempts it took
    // (`deployment`/`attempts` are the answer-writing model's); null on every other row.
    version: 8,
    name: 'usage-search-deployment',
    sql: 'ALTER TABLE usage_records ADD COLUMN search_deployment TEXT, ADD COLUMN search_attempts INTEGER;',
  },
  {
    // A video task's upstream attempts (models with deployments), summed over its queue runs and counted as
    // each starts: the create call's usage record shows the sum, also when a run's process died.
    version: 9,
    name: 'video-upstream-attempts',
    sql: 'ALTER TABLE video_tasks ADD COLUMN upstream_attempts INTEGER NOT NULL DEFAULT 0;',
  },
];

export class SchemaTooNewError extends Error {
  constructor(found: number, known: number) {
    super(
      `the PostgreSQL database is at schema version ${found}, newer than this Omnigate knows (${known}): it was migrated by a newer release; run that release (or newer) against it, or point OMNIGATE_DATABASE_URL at another database`,
    );
    this.name = 'SchemaTooNewError';
  }
}

/** Applies the missing migrations under the advisory lock; returns the versions this call applied. */
export async function migrate(pool: PgPool, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw unavailable(error);
  }
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((row) => row.version));
      const known = Math.max(0, ...migrations.map((migration) => migration.version));
      const newest = Math.max(0, ...applied);
      if (newest > known) {
        throw new SchemaTooNewError(newest, known);
      }
      const done: number[] = [];
      for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
        if (applied.has(migration.version)) {
          continue;
        }
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
            migration.version,
            migration.name,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(
            `PostgreSQL migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`,
            {
              cause: error,
            },
          );
        }
        done.push(migration.version);
      }
      return done;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } catch (error) {
    throw unavailable(error);
  } finally {
    client.release();
  }
}
