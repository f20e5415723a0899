/**
 * Projects on PostgreSQL: the same rules as the SQLite store (../project-store.ts). The table's trigger
 * (migration 4) notifies every instance on the key change feed's channel; this process hears its own change
 * at once through `changes`.
 */
import type { Limits } from '../../core/limits.js';
import type { KeyChangeFeed } from '../key-change-feed.js';
import type { ProjectRecord, ProjectStore } from '../project-store.js';
import { type PgPool, query } from './pool.js';

interface ProjectRow {
  name: string;
  limits: Limits;
  created_at: string | number;
}

const toRecord = (row: ProjectRow): ProjectRecord => ({
  name: row.name,
  limits: row.limits ?? {},
  createdAt: Number(row.created_at),
});

export function createPostgresProjectStore(
  pool: PgPool,
  options: { now?: () => number; changes?: KeyChangeFeed } = {},
): ProjectStore {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const announce = async () => {
    await options.changes?.publish({ kind: 'unknown' });
  };
  return {
    async create({ name, limits = {} }) {
      const { rows } = await query<ProjectRow>(
        pool,
        'INSERT INTO projects (name, limits, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING *',
        [name, JSON.stringify(limits), now()],
      );
      if (!rows[0]) {
        return undefined;
      }
      await announce();
      return toRecord(rows[0]);
    },
    async get(name) {
      const { rows } = await query<ProjectRow>(pool, 'SELECT * FROM projects WHERE name = $1', [name]);
      return rows[0] ? toRecord(rows[0]) : undefined;
    },
    async list() {
      const { rows } = await query<ProjectRow>(pool, 'SELECT * FROM projects ORDER BY name');
      return rows.map(toRecord);
    },
    async update(name, limits) {
      const { rows } = await query<ProjectRow>(pool, 'UPDATE projects SET limits = $2 WHERE name = $1 RETURNING *', [
        name,
        JSON.stringify(limits),
      ]);
      if (!rows[0]) {
        return undefined;
      }
      await announce();
      return toRecord(rows[0]);
    },
    async delete(name) {
      const { rowCount } = await query(pool, 'DELETE FROM projects WHERE name = $1', [name]);
      if (rowCount === 0) {
        return false;
      }
      await announce();
      return true;
    },
  };
}
