/**
 * The typed admin client: the admin API (`/admin/v1`) with the operator's admin key (`OMNIGATE_ADMIN_KEY`, or
 * a key made with `omnigate keys create --admin`) as the bearer token. Each helper returns the typed body of
 * the 2xx answer or throws `OmnigateError`; `raw` reaches every operation as openapi-fetch does.
 *
 * ```ts
 * const admin = createAdminClient({ baseUrl: 'http://127.0.0.1:8080', adminKey });
 * const { key } = await admin.createKey({ name: 'batch', limits: { rpm: 60 } });
 * ```
 */
import createFetchClient from 'openapi-fetch';
import type { components, paths } from '../generated/api.js';
import { bearerAuth } from './bearer-auth.js';
import type { CallOptions, RawClient } from './raw-client.js';
import { unwrap } from './unwrap.js';

type Schemas = components['schemas'];
export type AdminKey = Schemas['AdminKey'];
export type AdminKeyCreated = Schemas['AdminKeyCreated'];
export type AdminKeyCreateRequest = Schemas['AdminKeyCreateRequest'];
export type AdminKeyUpdateRequest = Schemas['AdminKeyUpdateRequest'];
export type Project = Schemas['Project'];
export type ProjectCreateRequest = Schemas['ProjectCreateRequest'];
export type ProjectUpdateRequest = Schemas['ProjectUpdateRequest'];
export type ProjectDeleted = Schemas['ProjectDeleted'];
export type UsageSummary = Schemas['UsageSummary'];
export type LimitsBody = Schemas['Limits'];

export interface AdminClientOptions {
  /** The server root, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  adminKey: string;
  fetch?: (request: Request) => Promise<Response>;
  headers?: Record<string, string>;
}

export interface UsageSummaryQuery {
  group_by?: 'day' | 'model' | 'key' | 'project';
  since?: number;
  until?: number;
  key_id?: string;
  project?: string;
}

export interface OmnigateAdminClient {
  raw: RawClient;
  listKeys(options?: CallOptions): Promise<AdminKey[]>;
  /** The answer's `key` is the secret, shown this once. */
  createKey(body: AdminKeyCreateRequest, options?: CallOptions): Promise<AdminKeyCreated>;
  getKey(keyId: string, options?: CallOptions): Promise<AdminKey>;
  updateKey(keyId: string, body: AdminKeyUpdateRequest, options?: CallOptions): Promise<AdminKey>;
  revokeKey(keyId: string, options?: CallOptions): Promise<AdminKey>;
  listProjects(options?: CallOptions): Promise<Project[]>;
  createProject(body: ProjectCreateRequest, options?: CallOptions): Promise<Project>;
  getProject(name: string, options?: CallOptions): Promise<Project>;
  updateProject(name: string, body: ProjectUpdateRequest, options?: CallOptions): Promise<Project>;
  deleteProject(name: string, options?: CallOptions): Promise<ProjectDeleted>;
  /** Spend across keys (`GET /admin/v1/usage/summary`). */
  usageSummary(query?: UsageSummaryQuery, options?: CallOptions): Promise<UsageSummary>;
}

export function createAdminClient(options: AdminClientOptions): OmnigateAdminClient {
  const raw: RawClient = createFetchClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers: options.headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  raw.use(bearerAuth(options.adminKey));
  const key = (keyId: string) => ({ path: { key_id: keyId } });
  const project = (name: string) => ({ path: { project_name: name } });
  return {
    raw,
    listKeys: async (call = {}) => unwrap(await raw.GET('/admin/v1/keys', { signal: call.signal })).data as AdminKey[],
    createKey: async (body, call = {}) =>
      unwrap(await raw.POST('/admin/v1/keys', { body, signal: call.signal })) as AdminKeyCreated,
    getKey: async (keyId, call = {}) =>
      unwrap(await raw.GET('/admin/v1/keys/{key_id}', { params: key(keyId), signal: call.signal })) as AdminKey,
    updateKey: async (keyId, body, call = {}) =>
      unwrap(await raw.PATCH('/admin/v1/keys/{key_id}', { params: key(keyId), body, signal: call.signal })) as AdminKey,
    revokeKey: async (keyId, call = {}) =>
      unwrap(await raw.DELETE('/admin/v1/keys/{key_id}', { params: key(keyId), signal: call.signal })) as AdminKey,
    listProjects: async (call = {}) =>
      unwrap(await raw.GET('/admin/v1/projects', { signal: call.signal })).data as Project[],
    createProject: async (body, call = {}) =>
      unwrap(await raw.POST('/admin/v1/projects', { body, signal: call.signal })) as Project,
    getProject: async (name, call = {}) =>
      unwrap(
        await raw.GET('/admin/v1/projects/{project_name}', { params: project(name), signal: call.signal }),
      ) as Project,
    updateProject: async (name, body, call = {}) =>
      unwrap(
        await raw.PATCH('/admin/v1/projects/{project_name}', { params: project(name), body, signal: call.signal }),
      ) as Project,
    deleteProject: async (name, call = {}) =>
      unwrap(
        await raw.DELETE('/admin/v1/projects/{project_name}', { params: project(name), signal: call.signal }),
      ) as ProjectDeleted,
    usageSummary: async (query = {}, call = {}) =>
      unwrap(await raw.GET('/admin/v1/usage/summary', { params: { query }, signal: call.signal })) as UsageSummary,
  };
}
