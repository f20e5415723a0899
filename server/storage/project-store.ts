/**
 * Projects: a named group of API keys with limits of its own (issue 30). A key names its project
 * (key-store.ts); where a key and its project both limit something, the stricter applies (limits/). A project
 * that is deleted stops limiting its keys, which keep its name: created again, it limits them again.
 *
 * A change is announced on the key change feed like a key's (a notice naming no key): every instance's project
 * cache (project-cache.ts) then re-reads the projects. On SQLite the triggers below count the change in
 * `api_keys_meta`, which is how the keys CLI's change reaches a running server (sqlite-key-change-feed.ts).
 */
import type { Limits } from '../core/limits.js';
import type { SqliteDatabase } from './database.js';
import type { KeyChangeFeed } from './key-change-feed.js';

export interface ProjectRecord {
  name: string;
  limits: Limits;
  /** Unix seconds. */
  createdAt: number;
}

export interface ProjectStore {
  /** Creates a project; undefined when one of this name exists. */
  create(input: { name: string; limits?: Limits }): Promise<ProjectRecord | undefined>;
  get(name: string): Promise<ProjectRecord | undefined>;
  /** Every project, by name. */
  list(): Promise<ProjectRecord[]>;
  /** Replaces a project's limits; undefined when there is none of this name. */
  update(name: string, limits: Limits): Promise<ProjectRecord | undefined>;
  /** False when there was none of this name. */
  delete(name: string): Promise<boolean>;
}

/** A project's name: what a CLI flag and a URL path segment carry without quoting. */
export const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

interface ProjectRow {
  name: string;
  limits: string;
  created_at: number;
}

const toRecord = (row: ProjectRow): ProjectRecord => ({
  name: row.name,
  limits: JSON.parse(row.limits) as Limits,
  createdAt: row.created_at,
});

export function createProjectStore(
  db: SqliteDatabase,
  options: { now?: () => number; changes?: KeyChangeFeed } = {},
): ProjectStore {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  db.exec(`CREATE TABLE IF NOT EXISTS projects (
    name TEXT PRIMARY KEY,
    limits TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS api_keys_meta (name TEXT PRIMARY KEY, value ANY NOT NULL);
  INSERT OR IGNORE INTO api_keys_meta (name, value) VALUES ('changes', 0);
  CREATE TRIGGER IF NOT EXISTS projects_inserted AFTER INSERT ON projects
    BEGIN UPDATE api_keys_meta SET value = value + 1 WHERE name = 'changes'; END;
  CREATE TRIGGER IF NOT EXISTS projects_updated AFTER UPDATE ON projects
    BEGIN UPDATE api_keys_meta SET value = value + 1 WHERE name = 'changes'; END;
  CREATE TRIGGER IF NOT EXISTS projects_deleted AFTER DELETE ON projects
    BEGIN UPDATE api_keys_meta SET value = value + 1 WHERE name = 'changes'; END;`);
  const insert = db.prepare('INSERT OR IGNORE INTO projects (name, limits, created_at) VALUES (?, ?, ?)');
  const byName = db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE name = ?');
  const all = db.prepare<[], ProjectRow>('SELECT * FROM projects ORDER BY name');
  const setLimits = db.prepare('UPDATE projects SET limits = ? WHERE name = ?');
  const remove = db.prepare('DELETE FROM projects WHERE name = ?');
  const announce = async () => {
    await options.changes?.publish({ kind: 'unknown' });
  };
  return {
    async create({ name, limits = {} }) {
      if (insert.run(name, JSON.stringify(limits), now()).changes === 0) {
        return undefined;
      }
      await announce();
      return toRecord(byName.get(name)!);
    },
    async get(name) {
      const row = byName.get(name);
      return row ? toRecord(row) : undefined;
    },
    async list() {
      return all.all().map(toRecord);
    },
    async update(name, limits) {
      if (setLimits.run(JSON.stringify(limits), name).changes === 0) {
        return undefined;
      }
      await announce();
      return toRecord(byName.get(name)!);
    },
    async delete(name) {
      const deleted = remove.run(name).changes > 0;
      if (deleted) {
        await announce();
      }
      return deleted;
    },
  };
}
