/**
 * What the application is built from (`createApp(deps)` and every handler factory): stores, the registry,
 * the logger, limits and the shutdown signals. Routes take the part they need with `Pick<AppDeps, …>`.
 */
import type { Logger } from 'pino';
import type { ModelRegistry } from '../providers/registry.js';
import type { MediaPool } from '../engines/media-pool.js';
import type { LoadedSpec } from '../spec/load-spec.js';
import type { MediaDeps } from '../calls/link-media.js';
import type { VideoQueue } from '../calls/video/video-tasks.js';
import type { FileIndex } from '../core/file-index.js';
import type { KeyCache } from '../storage/key-cache.js';
import type { KeyStore } from '../storage/key-store.js';
import type { ProjectCache } from '../storage/project-cache.js';
import type { ProjectStore } from '../storage/project-store.js';
import type { FileSettings } from '../calls/files/file-quota.js';
import type { ResponseStore } from '../storage/response-store.js';
import type { UsageRecorder } from '../usage/usage-recorder.js';
import type { ToolSettings } from '../tools/tool-definition.js';
import type { AdminKeyCheck } from '../auth/admin-key.js';
import type { Readiness } from '../observability/readiness.js';
import type { CallLimiter } from '../limits/call-limiter.js';
import type { CostOf } from '../usage/call-record.js';
import type { TranscriptionSettings } from '../calls/audio/transcribe-audio.js';

export interface AppDeps {
  spec: LoadedSpec;
  keys: KeyStore;
  /** Projects (the admin API's); `projectCache` holds their limits for the limiter and is re-read after a change. */
  projects: ProjectStore;
  projectCache: Pick<ProjectCache, 'reload'>;
  /** What authentication reads: the verified keys in memory, kept fresh by the key change feed. */
  keyCache: KeyCache;
  usage: UsageRecorder;
  responses: ResponseStore;
  registry: ModelRegistry;
  /** The built-in engines' worker pool: the local models run in it (given to the registry), and so does image_understanding's built-in analysis. */
  mediaPool: MediaPool;
  media: MediaDeps;
  /** Video tasks: the durable queue, the runner that works it and each key's cap. */
  videos: VideoQueue;
  /** Uploaded files: rows here, bytes in `media.blobs`; `index` (search) is told of each file, when present. */
  files: FileSettings;
  /**
   * Search: the index of stored files (file storage calls `search.index.add`/`remove`) and the default models
   * of `POST /v1/web/search` (`local:search` when unset) and `POST /v1/search/answer` (`local:chat`).
   */
  search?: { index: FileIndex; defaultSearchModel?: string; defaultAnswerModel?: string };
  logger: Logger;
  /** The tools (REST `/v1/tools/*` and MCP): who may call MCP from a browser, and a test's DNS for image URLs. */
  tools?: ToolSettings;
  /** Speech-to-text: the largest audio file and the longest audio; OpenAI's limits when absent. */
  transcription?: TranscriptionSettings;
  /** Largest JSON body accepted, in bytes. */
  maxBodyBytes: number;
  /** The built Redoc page, if `npm run docs` has produced it. */
  docsPath?: string;
  /** The built web console (`console/dist`), served at `/console`; undefined when it was not built. */
  consoleDir?: string;
  version?: string;
  /** Fires when shutdown begins: health answers 503 so load balancers stop sending work. */
  drainingSignal?: AbortSignal;
  /** Fires when the shutdown grace period is over: running calls (long streams) stop. */
  shutdownSignal?: AbortSignal;
  now?: () => number;
  /** The admin key's check (`OMNIGATE_ADMIN_KEY`); without one, admin operations refuse everyone. */
  adminKey?: AdminKeyCheck;
  /** `GET /metrics`: the exposition text, when metrics are on. */
  metrics?: { render(): Promise<string>; contentType: string };
  /** `GET /health/ready`: the dependency checks. */
  readiness?: Readiness;
  /** Limits on every authenticated call and MCP tool call (limits/call-limiter.ts); none when absent. */
  limiter?: CallLimiter;
  /** Each call's cost in its usage record (limits/prices.ts); 0 when absent. */
  costOf?: CostOf;
}
