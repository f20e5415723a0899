/**
 * The admin API (`/admin/v1`, the `adminKey` scheme: auth/authenticate.ts admitted the admin key or an admin
 * API key before any of these run) and `GET /v1/usage/summary`, a key's own spend. Keys and projects are
 * written through their stores, which announce every change on the key change feed, so every instance's key
 * cache and project cache apply it from the next call; this process's project cache is re-read before the
 * answer, so a limit set here holds on the very next request.
 */
import type { Response } from 'express';
import { ApiError } from '../core/api-error.js';
import {
  type Limits,
  LimitValueError,
  limitsFromWire,
  limitsToWire,
  mergeLimits,
  type WireLimitField,
} from '../core/limits.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import type { ApiKeyRecord } from '../storage/key-store.js';
import type { ProjectRecord } from '../storage/project-store.js';
import type { UsageSummaryRow } from '../storage/usage-store.js';
import type { AppDeps } from './app-deps.js';

type AdminOperations =
  | 'getUsageSummary'
  | 'adminListKeys'
  | 'adminCreateKey'
  | 'adminGetKey'
  | 'adminUpdateKey'
  | 'adminRevokeKey'
  | 'adminListProjects'
  | 'adminCreateProject'
  | 'adminGetProject'
  | 'adminUpdateProject'
  | 'adminDeleteProject'
  | 'adminGetUsageSummary';

type WireLimits = Partial<Record<WireLimitField, unknown>>;

/** Limits from a request body; a bad value is a 400 naming `limits.<field>` (the contract checks first). */
function parseLimits(input: WireLimits | undefined): { limits: Limits; cleared: Array<keyof Limits> } {
  try {
    return limitsFromWire(input ?? {});
  } catch (error) {
    if (error instanceof LimitValueError) {
      throw new ApiError(400, error.message, { param: `limits.${error.field}`, code: 'invalid_limit' });
    }
    throw error;
  }
}

function keyObject(record: ApiKeyRecord): ResponseBody<'adminGetKey', 200> {
  return {
    id: record.id,
    object: 'admin.key',
    name: record.name,
    prefix: record.prefix,
    project: record.project ?? null,
    limits: limitsToWire(record.limits ?? {}),
    admin: record.admin ?? false,
    allowed_models: record.allowedModels,
    created_at: record.createdAt,
    revoked_at: record.revokedAt,
  };
}

function projectObject(record: ProjectRecord): ResponseBody<'adminGetProject', 200> {
  return { name: record.name, object: 'project', limits: limitsToWire(record.limits), created_at: record.createdAt };
}

function summaryGroup(row: UsageSummaryRow) {
  return {
    group: row.group,
    requests: row.requests,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    media_units: row.mediaUnits,
    cost_usd: row.costUsd,
  };
}

/** Folds per-key rows into per-project rows by each key's current project ('' for none). */
function byProject(rows: UsageSummaryRow[], projectOf: (keyId: string) => string): UsageSummaryRow[] {
  const groups = new Map<string, UsageSummaryRow>();
  for (const row of rows) {
    const name = projectOf(row.group);
    const into = groups.get(name) ?? {
      group: name,
      requests: 0,
      inputTokens: 0,
      outputTokens: 0,
      mediaUnits: 0,
      costUsd: 0,
    };
    into.requests += row.requests;
    into.inputTokens += row.inputTokens;
    into.outputTokens += row.outputTokens;
    into.mediaUnits += row.mediaUnits;
    into.costUsd += row.costUsd;
    groups.set(name, into);
  }
  return [...groups.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
}

export function adminHandlers(deps: Pick<AppDeps, 'keys' | 'projects' | 'projectCache' | 'usage'>): {
  [O in AdminOperations]: OperationHandler<O>;
} {
  async function existingProject(name: string | null | undefined): Promise<void> {
    if (name && !(await deps.projects.get(name))) {
      throw new ApiError(400, `There is no project '${name}'; create it first (POST /admin/v1/projects).`, {
        param: 'project',
        code: 'unknown_project',
      });
    }
  }

  async function keyOr404(id: string): Promise<ApiKeyRecord> {
    const record = await deps.keys.get(id);
    if (!record) {
      throw new ApiError(404, `No key with id '${id}'.`, { param: 'key_id', code: 'key_not_found', expected: true });
    }
    return record;
  }

  async function projectOr404(name: string): Promise<ProjectRecord> {
    const record = await deps.projects.get(name);
    if (!record) {
      throw new ApiError(404, `No project named '${name}'.`, {
        param: 'project_name',
        code: 'project_not_found',
        expected: true,
      });
    }
    return record;
  }

  async function summary(
    query: { group_by?: 'day' | 'model' | 'key' | 'project'; since?: number; until?: number },
    keyIds: string[] | undefined,
    projectOf: () => Promise<(keyId: string) => string>,
  ) {
    const groupBy = query.group_by ?? 'day';
    const rows = await deps.usage.summary({
      keyIds,
      since: query.since,
      until: query.until,
      groupBy: groupBy === 'project' ? 'key' : groupBy,
    });
    const grouped = groupBy === 'project' ? byProject(rows, await projectOf()) : rows;
    return { object: 'usage.summary' as const, group_by: groupBy, data: grouped.map(summaryGroup) };
  }

  const allProjects = async () => {
    const projects = new Map((await deps.keys.list()).map((key) => [key.id, key.project ?? '']));
    return (keyId: string) => projects.get(keyId) ?? '';
  };

  return {
    async getUsageSummary(req, res) {
      const key = scopeOf(res).key;
      const body = await summary(req.query, [key.id], async () => () => key.project ?? '');
      res.json(body satisfies ResponseBody<'getUsageSummary', 200>);
    },
    async adminGetUsageSummary(req, res) {
      const { key_id, project } = req.query;
      let keyIds: string[] | undefined = key_id === undefined ? undefined : [key_id];
      if (project !== undefined) {
        const members = (await deps.keys.list()).filter((key) => key.project === project).map((key) => key.id);
        keyIds = keyIds ? keyIds.filter((id) => members.includes(id)) : members;
      }
      const body = await summary(req.query, keyIds, allProjects);
      res.json(body satisfies ResponseBody<'adminGetUsageSummary', 200>);
    },
    async adminListKeys(_req, res) {
      const data = (await deps.keys.list()).map(keyObject);
      res.json({ object: 'list', data } satisfies ResponseBody<'adminListKeys', 200>);
    },
    async adminCreateKey(req, res) {
      const body = req.body;
      const { limits } = parseLimits(body.limits);
      await existingProject(body.project);
      const { key, record } = await deps.keys.create({
        name: body.name ?? 'unnamed',
        allowedModels: body.allowed_models ?? [],
        project: body.project ?? null,
        limits,
        admin: body.admin ?? false,
      });
      (res as Response).status(201);
      res.json({ ...keyObject(record), key } satisfies ResponseBody<'adminCreateKey', 201>);
    },
    async adminGetKey(req, res) {
      res.json(keyObject(await keyOr404(req.params.key_id)));
    },
    async adminUpdateKey(req, res) {
      const current = await keyOr404(req.params.key_id);
      const body = req.body;
      const change = body.limits ? parseLimits(body.limits as WireLimits) : undefined;
      await existingProject(body.project);
      const updated = await deps.keys.update(current.id, {
        name: body.name,
        project: body.project,
        limits: change ? mergeLimits(current.limits ?? {}, change.limits, change.cleared) : undefined,
      });
      res.json(keyObject(updated ?? current));
    },
    async adminRevokeKey(req, res) {
      const current = await keyOr404(req.params.key_id);
      if (current.revokedAt !== null || !(await deps.keys.revoke(current.id))) {
        throw new ApiError(404, `No active key with id '${current.id}'.`, {
          param: 'key_id',
          code: 'key_not_found',
          expected: true,
        });
      }
      res.json(keyObject((await deps.keys.get(current.id)) ?? current));
    },
    async adminListProjects(_req, res) {
      const data = (await deps.projects.list()).map(projectObject);
      res.json({ object: 'list', data } satisfies ResponseBody<'adminListProjects', 200>);
    },
    async adminCreateProject(req, res) {
      const { limits } = parseLimits(req.body.limits);
      const created = await deps.projects.create({ name: req.body.name, limits });
      if (!created) {
        throw new ApiError(409, `A project named '${req.body.name}' exists.`, {
          param: 'name',
          code: 'project_exists',
          expected: true,
        });
      }
      await deps.projectCache.reload();
      (res as Response).status(201);
      res.json(projectObject(created) satisfies ResponseBody<'adminCreateProject', 201>);
    },
    async adminGetProject(req, res) {
      res.json(projectObject(await projectOr404(req.params.project_name)));
    },
    async adminUpdateProject(req, res) {
      const current = await projectOr404(req.params.project_name);
      const change = parseLimits(req.body.limits as WireLimits);
      const updated = await deps.projects.update(
        current.name,
        mergeLimits(current.limits, change.limits, change.cleared),
      );
      if (!updated) {
        await projectOr404(current.name);
      }
      await deps.projectCache.reload();
      res.json(projectObject(updated ?? current));
    },
    async adminDeleteProject(req, res) {
      const name = req.params.project_name;
      if (!(await deps.projects.delete(name))) {
        await projectOr404(name);
      }
      await deps.projectCache.reload();
      res.json({ name, object: 'project.deleted', deleted: true } satisfies ResponseBody<'adminDeleteProject', 200>);
    },
  };
}
