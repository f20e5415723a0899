/**
 * Configuration: environment variables plus an optional YAML file (`OMNIGATE_CONFIG`) of providers, models,
 * aliases and routing rules. Parsed once at start into a frozen `Config`; a bad value stops the server with
 * a message that names the field. This module and `main.ts` are the only readers of `process.env`.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { Limits } from './core/limits.js';
import { AUDIO_CONTAINERS, MODEL_TYPES } from './core/models.js';
import { DEFAULT_MEDIA_SETTINGS, type MediaPoolSettings } from './engines/media-pool.js';
import { DEFAULT_EXTRACTION_LIMITS, type ExtractionLimits } from './engines/text/extract-text.js';

/** Usage records kept while the database takes no writes: ~100 MB at most, minutes of traffic at 1k req/s. */
export const DEFAULT_USAGE_BUFFER_MAX = 100_000;

const providerBase = {
  base_url: z.string().url(),
  api_key: z.string().min(1).optional(),
  timeout_ms: z.number().int().positive().default(60_000),
  /** Opening a connection; default `timeout_ms`. */
  connect_timeout_ms: z.number().int().positive().optional(),
  /** From the request sent to the answer's headers; default `timeout_ms`. */
  first_byte_timeout_ms: z.number().int().positive().optional(),
  /** Between two pieces of an answer's body (a stream's events); default `timeout_ms`. */
  idle_timeout_ms: z.number().int().positive().optional(),
  max_connections: z.number().int().positive().max(1024).default(256),
  headers: z.record(z.string(), z.string()).default({}),
};

/** A body field name, or `false` to leave that value out of the request. */
const musicField = (name: string) => z.union([z.string().min(1), z.literal(false)]).default(name);

/**
 * Music from an OpenAI-compatible upstream (OpenAI has no music endpoint, so each server names things its own
 * way): where to post, which body fields carry the call's values, and where the audio is in the answer —
 * the body itself (`bytes`), base64 text at a JSON pointer (`base64`), or a URL at a JSON pointer (`url`,
 * fetched by the gateway through its SSRF guard). See `providers/openai-compatible/music.ts`.
 */
const musicSchema = z
  .object({
    path: z.string().startsWith('/').default('/music/generations'),
    fields: z
      .object({
        model: musicField('model'),
        prompt: musicField('prompt'),
        lyrics: musicField('lyrics'),
        instrumental: musicField('instrumental'),
        duration: musicField('duration'),
        seed: musicField('seed'),
        format: musicField('response_format'),
      })
      .strict()
      .default({
        model: 'model',
        prompt: 'prompt',
        lyrics: 'lyrics',
        instrumental: 'instrumental',
        duration: 'duration',
        seed: 'seed',
        format: 'response_format',
      }),
    /** Constant fields sent with every call (e.g. `task: text2music`); the mapped fields win. */
    body: z.record(z.string(), z.unknown()).default({}),
    answer: z.enum(['bytes', 'base64', 'url']).default('bytes'),
    /** RFC 6901 JSON pointer to the base64 text or the URL, e.g. `/data/0/b64_json`; required unless `answer: bytes`. */
    pointer: z.string().regex(/^\//, 'a JSON pointer starts with /').optional(),
    /** Where a JSON answer says how many seconds it made; otherwise they are read from the audio. */
    duration_pointer: z.string().regex(/^\//, 'a JSON pointer starts with /').optional(),
  })
  .strict()
  .refine((music) => music.answer === 'bytes' || music.pointer !== undefined, {
    message: 'answer base64 and url need a pointer',
    path: ['pointer'],
  });

const providerSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('openai-compatible'),
      ...providerBase,
      /** Whether the upstream serves `/responses` itself (OpenAI does; most local servers do not). */
      responses: z.enum(['native', 'translate']).default('translate'),
      /** Set only for upstreams that offer music; without it the provider has no music models. */
      music: musicSchema.optional(),
      /** Speech-to-text: the audio containers the upstream takes; others are converted (ffmpeg) to the first. Default: any, as sent. */
      transcription: z
        .object({ accepted_formats: z.array(z.enum(AUDIO_CONTAINERS)).min(1).optional() })
        .strict()
        .optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('anthropic'),
      ...providerBase,
      base_url: z.string().url().default('https://api.anthropic.com'),
      anthropic_version: z.string().default('2023-06-01'),
    })
    .strict(),
  // Web search APIs (providers/web-search/): models of type `search` only.
  z
    .object({ type: z.literal('searxng'), ...providerBase, timeout_ms: z.number().int().positive().default(15_000) })
    .strict(),
  z
    .object({
      type: z.literal('brave'),
      ...providerBase,
      base_url: z.string().url().default('https://api.search.brave.com/res/v1'),
      api_key: z.string().min(1),
      timeout_ms: z.number().int().positive().default(15_000),
    })
    .strict(),
  z
    .object({
      type: z.literal('tavily'),
      ...providerBase,
      base_url: z.string().url().default('https://api.tavily.com'),
      api_key: z.string().min(1),
      timeout_ms: z.number().int().positive().default(30_000),
    })
    .strict(),
]);

/** Limits and prices: a bad value is refused naming its field (negative, non-numeric or beyond these bounds). */
const count = (max: number) => z.number().int().min(0).max(max);
const dollars = z.number().min(0).max(1_000_000_000);

const limitsSchema = z
  .object({
    rpm: count(100_000_000).optional(),
    tpm: count(1_000_000_000_000).optional(),
    max_parallel: count(1_000_000).optional(),
    media_units_per_day: count(1_000_000_000_000).optional(),
    budget_usd: dollars.optional(),
    budget_period: z.enum(['day', 'month', 'total']).optional(),
    /** What a call gets when the counters (Redis) cannot be reached. */
    on_store_down: z.enum(['allow', 'deny']).default('allow'),
    /** How long a call holds its concurrency slot and reservation without renewal (a crashed call's expire then). */
    lease_seconds: z.number().int().min(5).max(86_400).default(300),
  })
  .strict();

/** USD per unit (README "Limits and prices"). */
const priceSchema = z
  .object({
    input: dollars.optional(),
    output: dollars.optional(),
    cached_input: dollars.optional(),
    reasoning: dollars.optional(),
    image: dollars.optional(),
    megapixel: dollars.optional(),
    speech_1k_characters: dollars.optional(),
    second: dollars.optional(),
  })
  .strict();

const deploymentSchema = z
  .object({
    provider: z.string().min(1),
    /** The upstream's own name of the model on this deployment. */
    model: z.string().min(1),
    /** Relative share of calls under the `weighted` strategy. */
    weight: z.number().positive().max(1_000_000).default(1),
    /** The name headers, logs, metrics and the breaker use; default `provider:model`. */
    id: z.string().min(1).max(200).optional(),
  })
  .strict();

/** `server/providers/resilience/`: how calls spread over a model's deployments and fall over. */
export const STRATEGIES = ['weighted', 'least-busy', 'lowest-latency'] as const;

const modelSchema = z
  .object({
    /** One upstream (as before deployments existed); or give `deployments`. */
    provider: z.string().min(1).optional(),
    /** The upstream's own name of the model. */
    model: z.string().min(1).optional(),
    /** The public id; defaults to `provider:model`. */
    id: z.string().min(1).optional(),
    type: z.enum(MODEL_TYPES).default('chat'),
    aliases: z.array(z.string().min(1)).default([]),
    /** Whether the upstream model takes reasoning settings (default true); false drops them, with a warning, on translated calls. */
    reasoning: z.boolean().optional(),
    /** Several upstreams serving this one model id. */
    deployments: z.array(deploymentSchema).min(1).max(64).optional(),
    strategy: z.enum(STRATEGIES).default('weighted'),
    /** Attempts after the first, across deployments, before the fallbacks; default 2 (0 with one plain provider). */
    retries: z.number().int().min(0).max(10).optional(),
    /** Model names (ids, aliases or `provider:model`) tried in order when every deployment failed. */
    fallbacks: z.array(z.string().min(1)).max(10).default([]),
    /** Model names tried in order when the upstream says the input does not fit the model's context window. */
    context_window_fallbacks: z.array(z.string().min(1)).max(10).default([]),
    /** The whole call, all attempts and waits, before its first byte; default the largest first-byte timeout of its providers. */
    timeout_ms: z.number().int().positive().optional(),
    /** First wait of the jittered exponential backoff before a deployment is tried again. */
    backoff_ms: z.number().int().min(0).max(60_000).default(100),
    /** The longest wait between attempts; a `Retry-After` beyond it is not waited for (another deployment is tried). */
    max_backoff_ms: z.number().int().min(0).max(600_000).default(5_000),
    /** What the model costs; overrides the shipped table. */
    price: priceSchema.optional(),
  })
  .strict();

const routeSchema = z
  .object({
    /** A glob over requested model names: `*` matches any run of characters. */
    pattern: z.string().min(1),
    /** Send matching names to this provider, keeping the requested name as the upstream model. */
    provider: z.string().min(1).optional(),
    /** Or send them to this configured model (id or alias). */
    model: z.string().min(1).optional(),
  })
  .strict()
  .refine((r) => (r.provider === undefined) !== (r.model === undefined), {
    message: 'a route needs exactly one of provider or model',
  });

const fileSchema = z
  .object({
    providers: z
      .record(
        z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'provider ids are lower-case letters, digits, - and _'),
        providerSchema,
      )
      .default({}),
    models: z.array(modelSchema).default([]),
    aliases: z.record(z.string(), z.string()).default({}),
    routes: z.array(routeSchema).default([]),
    default_chat_model: z.string().min(1).optional(),
    /** The search model of `POST /v1/web/search` and `POST /v1/search/answer` when the request names none; default `local:search`. */
    default_search_model: z.string().min(1).optional(),
    /** Semantic search over stored files: the embedding model whose vectors rank passages beside full text. */
    search: z
      .object({ embedding_model: z.string().min(1).optional() })
      .strict()
      .default({}),
    /** Per deployment: consecutive failures that open its circuit, and how long it stays open before one probe. */
    circuit_breaker: z
      .object({
        failure_threshold: z.number().int().min(1).max(1000).default(5),
        cooldown_ms: z.number().int().min(1).max(3_600_000).default(30_000),
      })
      .strict()
      .default({ failure_threshold: 5, cooldown_ms: 30_000 }),
    /** Built-in routes for the model names coding agents send (`claude-*`, `gpt-*`, …); see agent-routes.ts. */
    agent_routes: z.boolean().default(true),
    /** Defaults for every key (a key's own limits win), and what happens when the counters are unreachable. */
    limits: limitsSchema.optional(),
    /** Prices by model id or alias, USD per unit. */
    prices: z.record(z.string().min(1), priceSchema).default({}),
  })
  .strict();

export type ProviderConfig = z.infer<typeof providerSchema> & { id: string };
export type DeploymentConfig = Required<Pick<z.infer<typeof deploymentSchema>, 'provider' | 'model' | 'weight' | 'id'>>;
export type CircuitBreakerConfig = z.infer<typeof fileSchema>['circuit_breaker'];

/**
 * A configured model as the registry takes it: `provider` and `model` name its first deployment (a model given
 * the old way has exactly one), and `resilient` says whether calls go through the retry layer (deployments,
 * retries or fallbacks were configured).
 */
export type ModelConfig = Pick<z.infer<typeof modelSchema>, 'id' | 'type' | 'aliases' | 'reasoning' | 'price'> & {
  provider: string;
  model: string;
} & Partial<ResilienceConfig>;

/** How calls of one model are spread and retried (absent on models made in code: one plain deployment). */
export type ResilienceConfig = Pick<
  z.infer<typeof modelSchema>,
  'strategy' | 'fallbacks' | 'context_window_fallbacks' | 'timeout_ms' | 'backoff_ms' | 'max_backoff_ms'
> & { deployments: DeploymentConfig[]; retries: number; resilient: boolean };
export type PriceConfig = z.infer<typeof priceSchema>;

/** Limits and where their counters live (README "Limits, budgets and spend"). */
export interface LimitSettings {
  /** Every key's defaults; a key's (or its project's) own limits are set through the admin API or the CLI. */
  defaults: Limits;
  onStoreDown: 'allow' | 'deny';
  leaseMs: number;
  /** `OMNIGATE_REDIS_URL`: counters shared by every instance; in process when absent. */
  redisUrl?: string;
}
export type RouteConfig = z.infer<typeof routeSchema>;

/** How this process works the video task queue (calls/video/video-runner.ts). */
export interface VideoRunnerSettings {
  /** Tasks running at once in this process. */
  concurrency: number;
  /** How long a claim holds without renewal; a dead runner's task is taken over after it. */
  leaseMs: number;
  /** How often the queue is checked when nothing woke the runner. */
  pollMs: number;
  /** Runs of one task before a transient failure becomes `failed`. */
  maxAttempts: number;
  /** How long a finished video's content is kept. */
  retentionSeconds: number;
  /** Longest one attempt may run (an upstream job stuck in `queued` forever); then it counts as a transient failure. */
  attemptTimeoutMs: number;
  /** A key's tasks queued or processing at once; its next create is a 429 (checked when a task is created). */
  maxActivePerKey: number;
}

export const DEFAULT_VIDEO_RUNNER_SETTINGS: VideoRunnerSettings = {
  concurrency: 1,
  leaseMs: 30_000,
  pollMs: 1_000,
  maxAttempts: 3,
  retentionSeconds: 24 * 3600,
  attemptTimeoutMs: 30 * 60_000,
  maxActivePerKey: 10,
};

export interface TranscriptionSettings {
  /** The largest audio file, in bytes (`OMNIGATE_TRANSCRIPTION_MAX_BYTES`). */
  maxBytes: number;
  /** The longest audio, in seconds (`OMNIGATE_TRANSCRIPTION_MAX_SECONDS`). */
  maxSeconds: number;
}

/** OpenAI's own file limit (25 MB) and the longest input its transcription models take (1500 s). */
export const DEFAULT_TRANSCRIPTION_SETTINGS: TranscriptionSettings = { maxBytes: 25 * 1024 * 1024, maxSeconds: 1500 };

/** Extractions (PDF and HTML text) one key may have queued or running: a large honest batch of uploads, not a flood. */
export const DEFAULT_EXTRACTION_PER_KEY = 100;

export interface FileSettings {
  maxFileBytes: number;
  quotaBytes: number;
  quotaCount: number;
}

export const DEFAULT_FILE_SETTINGS: FileSettings = {
  maxFileBytes: 512 * 1024 * 1024,
  quotaBytes: 10 * 1024 * 1024 * 1024,
  quotaCount: 10_000,
};

export interface Config {
  /** The YAML file read (`OMNIGATE_CONFIG`), to name it in errors found later (e.g. an alias to no model). */
  configPath?: string;
  port: number;
  host: string;
  dataDir: string;
  databasePath: string;
  apiKeys: string[];
  logLevel: string;
  /** Largest accepted JSON body, in bytes. */
  maxBodyBytes: number;
  /** Uploaded files (`/v1/files`): the largest upload, and each key's quota of stored bytes and files. */
  files: FileSettings;
  /** The caps of one file's text extraction for the search index. */
  indexLimits: ExtractionLimits;
  /** Speech-to-text: the largest audio file and the longest audio, checked before an upstream is called. */
  transcription: TranscriptionSettings;
  /** How long a graceful shutdown waits for in-flight requests before closing them. */
  shutdownGraceMs: number;
  /** Server processes sharing the port (`OMNIGATE_WORKERS`, `omnigate start --workers`); 1 serves in this process. */
  workers: number;
  /** How long a client may take to send a whole request (headers and body); the connection is closed after. */
  requestTimeoutMs: number;
  /** How long a client may take to send the request headers. */
  headersTimeoutMs: number;
  /** Stored responses (whole conversations) older than this many days are deleted. */
  responseRetentionDays: number;
  /**
   * `OMNIGATE_DATABASE_URL`: a PostgreSQL database (`postgres://…`) holding every store instead of the SQLite
   * file in the data directory; undefined keeps SQLite.
   */
  databaseUrl?: string;
  /** Usage records older than this many days are deleted (`OMNIGATE_USAGE_RETENTION_DAYS`); undefined keeps them. */
  usageRetentionDays?: number;
  /** Usage records held in memory at most while the database takes no writes (`OMNIGATE_USAGE_BUFFER_MAX`). */
  usageBufferMax: number;
  /**
   * Build the contract validator of every JSON operation before listening (`OMNIGATE_WARM_UP`), instead of on
   * each operation's first call: seconds of CPU at start, none on the first callers' event loop.
   */
  warmUp: boolean;
  providers: ProviderConfig[];
  models: ModelConfig[];
  aliases: Record<string, string>;
  routes: RouteConfig[];
  /** The built-in media engines' worker pool. */
  media: MediaPoolSettings;
  /** Text extractions (PDF, HTML) one key may have queued or running in the extraction worker's queue. */
  extractionPerKey: number;
  /** The video task queue of this process. */
  videos: VideoRunnerSettings;
  /** How long signed media links (and the bytes behind them) live. */
  mediaLinkTtlSeconds: number;
  /** The base URL media links start with, when clients reach the server under another address (a proxy). */
  publicUrl?: string;
  /** Origins (`scheme://host[:port]`) besides localhost whose browsers may call `/v1/mcp` (`OMNIGATE_MCP_ALLOWED_ORIGINS`). */
  mcpAllowedOrigins: string[];
  /** Where agents' own model names go when no upstream of theirs is configured; default `local:chat`. */
  defaultChatModel?: string;
  /** The search model used when a search request names none; default `local:search`. */
  defaultSearchModel?: string;
  /** The embedding model of semantic file search (`search.embedding_model`); full text only when absent. */
  searchEmbeddingModel?: string;
  agentRoutes: boolean;
  /** Each deployment's circuit breaker (server/providers/resilience/). */
  circuitBreaker: CircuitBreakerConfig;
  /** Redis shared by all instances (`OMNIGATE_REDIS_URL`): breaker state lives there when set. */
  redisUrl?: string;
  /** The operator's key (`OMNIGATE_ADMIN_KEY`) for admin operations such as `GET /metrics`; none by default. */
  adminKey?: string;
  observability: ObservabilitySettings;
  /** Where blob bytes live (`OMNIGATE_BLOB_URL`); `<dataDir>/blobs` when absent. */
  blobLocation?: BlobLocation;
  /** The pepper shared by every instance (`OMNIGATE_PEPPER_FILE`); `<dataDir>/omnigate.pepper` when absent. */
  pepperFile?: string;
  limits: LimitSettings;
  /** Prices by model id or alias, from `prices:` and each model's `price:`. */
  prices: Record<string, PriceConfig>;
}

/** A blob byte store other than the data directory's own (README "Blob storage and the pepper"). */
export type BlobLocation =
  | { kind: 'directory'; directory: string }
  | {
      kind: 's3';
      bucket: string;
      /** Key prefix without leading or trailing slash; '' for the bucket's root. */
      prefix: string;
      /** `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`; AWS's own endpoint when absent. */
      endpoint?: string;
      /** `AWS_REGION` or `AWS_DEFAULT_REGION`; us-east-1 when neither is set. */
      region: string;
      /** Path-style addressing: on with a custom endpoint, which often has no per-bucket host names. */
      forcePathStyle: boolean;
      /** Only tests pass credentials; the server leaves them to the AWS SDK's default chain (AWS_ACCESS_KEY_ID…). */
      credentials?: { accessKeyId: string; secretAccessKey: string };
    };

/** Metrics and traces (README "Observability"). */
export interface ObservabilitySettings {
  /** Collect metrics: on when they can be scraped (an admin key or a metrics port) unless `OMNIGATE_METRICS=false`. */
  metrics: boolean;
  /** A second port serving `GET /metrics` without authentication (`OMNIGATE_METRICS_PORT`). */
  metricsPort?: number;
  /** Label request and token counters with the API key id (`OMNIGATE_METRICS_PER_KEY=true`); off: one series per key is unbounded. */
  metricsPerKey: boolean;
  /** OTLP/HTTP traces go here when set (`OTEL_EXPORTER_OTLP_ENDPOINT`); the exporter reads the other `OTEL_*` variables itself. */
  otlpEndpoint?: string;
  /** Prompt and completion text in spans (`OMNIGATE_TRACE_CONTENT=true`); off by default. */
  traceContent: boolean;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Replaces `${NAME}` with the environment variable's value; a missing variable is an error naming it. */
function interpolate(value: unknown, env: NodeJS.ProcessEnv, where: string): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      const replacement = env[name];
      if (replacement === undefined) {
        throw new ConfigError(`${where}: environment variable ${name} is referenced but not set`);
      }
      return replacement;
    });
  }
  if (Array.isArray(value)) {
    return value.map((item, index) => interpolate(item, env, `${where}[${index}]`));
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolate(item, env, where ? `${where}.${key}` : key)]),
    );
  }
  return value;
}

function integerVariable(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

/** The most worker processes `OMNIGATE_WORKERS` accepts: far beyond any core count, a bound on a typo. */
export const MAX_WORKERS = 256;

/** `auto` is one process per core the OS gives this process; otherwise an integer from 1 to MAX_WORKERS. */
export function workersVariable(env: NodeJS.ProcessEnv): number {
  if (env.OMNIGATE_WORKERS?.trim() === 'auto') {
    return availableParallelism();
  }
  try {
    return integerVariable(env, 'OMNIGATE_WORKERS', 1, 1, MAX_WORKERS);
  } catch {
    throw new ConfigError(
      `OMNIGATE_WORKERS must be 'auto' or an integer from 1 to ${MAX_WORKERS}, got '${env.OMNIGATE_WORKERS}'`,
    );
  }
}

/** A comma-separated list of origins; each must parse as an http(s) URL with nothing after the host. */
function originsVariable(env: NodeJS.ProcessEnv, name: string): string[] {
  const raw = env[name];
  if (!raw) {
    return [];
  }
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      let url: URL;
      try {
        url = new URL(item);
      } catch {
        throw new ConfigError(`${name}: '${item}' is not an origin like https://app.example.com`);
      }
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== item.replace(/\/+$/, '')) {
        throw new ConfigError(`${name}: '${item}' is not an origin like https://app.example.com`);
      }
      return url.origin;
    });
}

function booleanVariable(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  if (raw === 'true' || raw === '1') {
    return true;
  }
  if (raw === 'false' || raw === '0') {
    return false;
  }
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}

function observabilitySettings(env: NodeJS.ProcessEnv, adminKey: string | undefined): ObservabilitySettings {
  const metricsPort = env.OMNIGATE_METRICS_PORT
    ? integerVariable(env, 'OMNIGATE_METRICS_PORT', 0, 0, 65535)
    : undefined;
  return {
    metrics: booleanVariable(env, 'OMNIGATE_METRICS', adminKey !== undefined || metricsPort !== undefined),
    metricsPort,
    metricsPerKey: booleanVariable(env, 'OMNIGATE_METRICS_PER_KEY', false),
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || undefined,
    traceContent: booleanVariable(env, 'OMNIGATE_TRACE_CONTENT', false),
  };
}

/** `postgres://` or `postgresql://`; anything else is refused at start rather than misread later. */
function databaseUrlVariable(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.OMNIGATE_DATABASE_URL?.trim();
  if (!raw) {
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('OMNIGATE_DATABASE_URL must be a postgres:// URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    // The URL is not echoed: it may hold a password.
    throw new ConfigError(`OMNIGATE_DATABASE_URL must be a postgres:// URL, got a ${url.protocol}// one`);
  }
  return raw;
}

function publicUrlVariable(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.OMNIGATE_PUBLIC_URL;
  if (!raw) {
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`OMNIGATE_PUBLIC_URL must be an absolute http(s) URL, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`OMNIGATE_PUBLIC_URL must be an absolute http(s) URL, got '${raw}'`);
  }
  return raw.replace(/\/+$/, '');
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `OMNIGATE_BLOB_URL`: `file:///path` or `s3://bucket/prefix`, with the S3 endpoint and region from AWS_*. */
export function blobLocationVariable(env: NodeJS.ProcessEnv): BlobLocation | undefined {
  const raw = env.OMNIGATE_BLOB_URL?.trim();
  if (!raw) {
    return undefined;
  }
  // A user and password in the URL are not repeated: the message goes to logs.
  const shown = raw.replace(/\/\/[^/@]*@/, '//…@');
  const refuse = (why: string) =>
    new ConfigError(`OMNIGATE_BLOB_URL must be file:///absolute/path or s3://bucket/prefix (${why}), got '${shown}'`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not a URL');
  }
  if (url.username || url.password || url.search || url.hash) {
    // Credentials go in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, never in a URL that gets logged.
    throw refuse('no user, password, query or fragment');
  }
  if (url.protocol === 'file:') {
    if (url.hostname && url.hostname !== 'localhost') {
      throw refuse('a file URL names a local path');
    }
    return { kind: 'directory', directory: fileURLToPath(url) };
  }
  if (url.protocol !== 's3:') {
    throw refuse(`unknown scheme ${url.protocol}`);
  }
  if (!BUCKET_NAME.test(url.hostname)) {
    throw refuse('a bucket name is 3 to 63 lowercase letters, digits, dots and hyphens');
  }
  let prefix: string;
  try {
    prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  } catch {
    throw refuse('a bad %-escape in the prefix');
  }
  const endpointRaw = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  if (endpointRaw) {
    let endpoint: URL | undefined;
    try {
      endpoint = new URL(endpointRaw);
    } catch {}
    if (!endpoint || (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:')) {
      throw new ConfigError(`AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL must be an http(s) URL, got '${endpointRaw}'`);
    }
  }
  return {
    kind: 's3',
    bucket: url.hostname,
    prefix,
    endpoint: endpointRaw,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    forcePathStyle: endpointRaw !== undefined,
  };
}

/**
 * One problem as a person can act on it. zod reports a bad record key as "Invalid key in record" and keeps
 * the reason (the allowed characters) in the nested issues.
 */
function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.join('.') || '(root)';
  if (issue.code === 'invalid_key') {
    const reasons = issue.issues.map((inner) => inner.message).join('; ');
    return `${where}: invalid name: ${reasons}`;
  }
  return `${where}: ${issue.message}`;
}

/** Parses the YAML configuration text; exported for tests. */
export function parseConfigFile(
  text: string,
  env: NodeJS.ProcessEnv,
  source = 'config',
): Omit<z.infer<typeof fileSchema>, 'models'> & { models: ModelConfig[] } {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    throw new ConfigError(`${source}: not valid YAML: ${(error as Error).message}`);
  }
  let interpolated: unknown;
  try {
    interpolated = interpolate(raw, env, '');
  } catch (error) {
    throw error instanceof ConfigError ? new ConfigError(`${source}: ${error.message}`) : error;
  }
  const parsed = fileSchema.safeParse(interpolated);
  if (!parsed.success) {
    throw new ConfigError(`${source}: ${parsed.error.issues.map(describeIssue).join('; ')}`);
  }
  const file = parsed.data;
  const models = file.models.map((model, index) => normalizeModel(model, index, source, file.providers));
  file.routes.forEach((route, index) => {
    if (route.provider && !Object.hasOwn(file.providers, route.provider)) {
      throw new ConfigError(`${source}: routes.${index}.provider: unknown provider '${route.provider}'`);
    }
  });
  return { ...file, models };
}

/** One `models:` entry with its deployments spelled out, checked against the providers; errors name the field. */
function normalizeModel(
  model: z.infer<typeof modelSchema>,
  index: number,
  source: string,
  providers: Record<string, unknown>,
): ModelConfig {
  const where = `${source}: models.${index}`;
  const { deployments: given, retries, provider, model: upstream, ...rest } = model;
  if (given && (provider !== undefined || upstream !== undefined)) {
    throw new ConfigError(`${where}: give either provider and model, or deployments, not both`);
  }
  if (!given && (provider === undefined || upstream === undefined)) {
    throw new ConfigError(`${where}: a model needs provider and model, or deployments`);
  }
  if (given && rest.id === undefined) {
    throw new ConfigError(`${where}.id: a model with deployments needs an id`);
  }
  const deployments: DeploymentConfig[] = (given ?? [{ provider: provider!, model: upstream!, weight: 1 }]).map(
    (deployment) => ({ ...deployment, id: deployment.id ?? `${deployment.provider}:${deployment.model}` }),
  );
  const seen = new Set<string>();
  deployments.forEach((deployment, at) => {
    const field = given ? `${where}.deployments.${at}` : where;
    if (!Object.hasOwn(providers, deployment.provider) && deployment.provider !== 'local') {
      throw new ConfigError(`${field}.provider: unknown provider '${deployment.provider}'`);
    }
    if (seen.has(deployment.id)) {
      throw new ConfigError(`${field}.id: the deployment '${deployment.id}' is listed twice (give each an id)`);
    }
    seen.add(deployment.id);
  });
  const resilient =
    given !== undefined ||
    retries !== undefined ||
    rest.fallbacks.length > 0 ||
    rest.context_window_fallbacks.length > 0;
  return {
    ...rest,
    provider: deployments[0]!.provider,
    model: deployments[0]!.model,
    deployments,
    retries: retries ?? (given ? 2 : 0),
    resilient,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv): Readonly<Config> {
  const dataDir = path.resolve(env.OMNIGATE_DATA_DIR || './data');
  let file: ReturnType<typeof parseConfigFile> = {
    providers: {},
    models: [],
    aliases: {},
    routes: [],
    agent_routes: true,
    circuit_breaker: { failure_threshold: 5, cooldown_ms: 30_000 },
    prices: {},
    search: {},
  };
  if (env.OMNIGATE_CONFIG) {
    let text: string;
    try {
      text = readFileSync(env.OMNIGATE_CONFIG, 'utf8');
    } catch (error) {
      throw new ConfigError(`OMNIGATE_CONFIG: cannot read ${env.OMNIGATE_CONFIG}: ${(error as Error).message}`);
    }
    file = parseConfigFile(text, env, env.OMNIGATE_CONFIG);
  }
  const adminKey = env.OMNIGATE_ADMIN_KEY?.trim() || undefined;
  return Object.freeze({
    configPath: env.OMNIGATE_CONFIG || undefined,
    port: integerVariable(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir,
    databasePath: path.join(dataDir, 'omnigate.sqlite'),
    apiKeys: (env.OMNIGATE_API_KEYS ?? '')
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean),
    logLevel: env.LOG_LEVEL || 'info',
    maxBodyBytes: integerVariable(env, 'OMNIGATE_MAX_BODY_BYTES', 25 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    files: {
      maxFileBytes: integerVariable(
        env,
        'OMNIGATE_MAX_FILE_BYTES',
        DEFAULT_FILE_SETTINGS.maxFileBytes,
        1,
        64 * 1024 ** 3,
      ),
      quotaBytes: integerVariable(env, 'OMNIGATE_FILE_QUOTA_BYTES', DEFAULT_FILE_SETTINGS.quotaBytes, 0, 1024 ** 5),
      quotaCount: integerVariable(env, 'OMNIGATE_FILE_QUOTA_COUNT', DEFAULT_FILE_SETTINGS.quotaCount, 0, 10_000_000),
    },
    transcription: {
      maxBytes: integerVariable(
        env,
        'OMNIGATE_TRANSCRIPTION_MAX_BYTES',
        DEFAULT_TRANSCRIPTION_SETTINGS.maxBytes,
        1024,
        1024 ** 3,
      ),
      maxSeconds: integerVariable(
        env,
        'OMNIGATE_TRANSCRIPTION_MAX_SECONDS',
        DEFAULT_TRANSCRIPTION_SETTINGS.maxSeconds,
        1,
        24 * 3600,
      ),
    },
    indexLimits: {
      maxPages: integerVariable(env, 'OMNIGATE_INDEX_MAX_PAGES', DEFAULT_EXTRACTION_LIMITS.maxPages, 1, 1_000_000),
      maxDecompressedBytes: integerVariable(
        env,
        'OMNIGATE_INDEX_MAX_DECOMPRESSED_BYTES',
        DEFAULT_EXTRACTION_LIMITS.maxDecompressedBytes,
        1024,
        4 * 1024 ** 3,
      ),
      maxCharacters: integerVariable(
        env,
        'OMNIGATE_INDEX_MAX_CHARACTERS',
        DEFAULT_EXTRACTION_LIMITS.maxCharacters,
        1,
        500_000_000,
      ),
      budgetMs: integerVariable(env, 'OMNIGATE_INDEX_TIME_BUDGET_MS', DEFAULT_EXTRACTION_LIMITS.budgetMs, 100, 20_000),
    },
    shutdownGraceMs: integerVariable(env, 'OMNIGATE_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    workers: workersVariable(env),
    requestTimeoutMs: integerVariable(env, 'OMNIGATE_REQUEST_TIMEOUT_MS', 60_000, 1_000, 3_600_000),
    headersTimeoutMs: integerVariable(env, 'OMNIGATE_HEADERS_TIMEOUT_MS', 15_000, 1_000, 600_000),
    responseRetentionDays: integerVariable(env, 'OMNIGATE_RESPONSE_RETENTION_DAYS', 30, 1, 36_500),
    databaseUrl: databaseUrlVariable(env),
    usageRetentionDays: env.OMNIGATE_USAGE_RETENTION_DAYS
      ? integerVariable(env, 'OMNIGATE_USAGE_RETENTION_DAYS', 0, 1, 36_500)
      : undefined,
    usageBufferMax: integerVariable(env, 'OMNIGATE_USAGE_BUFFER_MAX', DEFAULT_USAGE_BUFFER_MAX, 1, 10_000_000),
    warmUp: booleanVariable(env, 'OMNIGATE_WARM_UP', false),
    media: {
      workers: integerVariable(env, 'OMNIGATE_MEDIA_WORKERS', DEFAULT_MEDIA_SETTINGS.workers, 1, 64),
      queueLimit: integerVariable(env, 'OMNIGATE_MEDIA_QUEUE', DEFAULT_MEDIA_SETTINGS.queueLimit, 0, 10_000),
      perKeyLimit: integerVariable(env, 'OMNIGATE_MEDIA_QUEUE_PER_KEY', DEFAULT_MEDIA_SETTINGS.perKeyLimit, 1, 10_000),
      jobTimeoutMs: integerVariable(
        env,
        'OMNIGATE_MEDIA_TIMEOUT_MS',
        DEFAULT_MEDIA_SETTINGS.jobTimeoutMs,
        1_000,
        3_600_000,
      ),
    },
    extractionPerKey: integerVariable(env, 'OMNIGATE_EXTRACTION_QUEUE_PER_KEY', DEFAULT_EXTRACTION_PER_KEY, 1, 10_000),
    videos: {
      ...DEFAULT_VIDEO_RUNNER_SETTINGS,
      concurrency: integerVariable(env, 'OMNIGATE_VIDEO_CONCURRENCY', DEFAULT_VIDEO_RUNNER_SETTINGS.concurrency, 1, 64),
      leaseMs: integerVariable(env, 'OMNIGATE_VIDEO_LEASE_MS', DEFAULT_VIDEO_RUNNER_SETTINGS.leaseMs, 1_000, 3_600_000),
      attemptTimeoutMs: integerVariable(
        env,
        'OMNIGATE_VIDEO_TIMEOUT_MS',
        DEFAULT_VIDEO_RUNNER_SETTINGS.attemptTimeoutMs,
        1_000,
        24 * 3_600_000,
      ),
      maxActivePerKey: integerVariable(
        env,
        'OMNIGATE_VIDEO_TASKS_PER_KEY',
        DEFAULT_VIDEO_RUNNER_SETTINGS.maxActivePerKey,
        1,
        100_000,
      ),
      retentionSeconds:
        integerVariable(
          env,
          'OMNIGATE_VIDEO_RETENTION_HOURS',
          DEFAULT_VIDEO_RUNNER_SETTINGS.retentionSeconds / 3600,
          1,
          24 * 365,
        ) * 3600,
    },
    mediaLinkTtlSeconds: integerVariable(env, 'OMNIGATE_MEDIA_URL_TTL_SECONDS', 3600, 60, 7 * 86_400),
    publicUrl: publicUrlVariable(env),
    mcpAllowedOrigins: originsVariable(env, 'OMNIGATE_MCP_ALLOWED_ORIGINS'),
    providers: Object.entries(file.providers).map(([id, provider]) => ({ ...provider, id })),
    models: file.models,
    aliases: file.aliases,
    routes: file.routes,
    defaultChatModel: file.default_chat_model,
    defaultSearchModel: file.default_search_model,
    searchEmbeddingModel: file.search.embedding_model,
    agentRoutes: file.agent_routes,
    circuitBreaker: file.circuit_breaker,
    redisUrl: env.OMNIGATE_REDIS_URL || undefined,
    adminKey,
    observability: observabilitySettings(env, adminKey),
    blobLocation: blobLocationVariable(env),
    pepperFile: env.OMNIGATE_PEPPER_FILE ? path.resolve(env.OMNIGATE_PEPPER_FILE) : undefined,
    limits: limitSettings(file.limits, env),
    prices: pricesOf(file),
  });
}

function limitSettings(limits: z.infer<typeof limitsSchema> | undefined, env: NodeJS.ProcessEnv): LimitSettings {
  const redisUrl = env.OMNIGATE_REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('OMNIGATE_REDIS_URL: must start with redis:// or rediss://');
  }
  const defaults: Limits = {
    rpm: limits?.rpm,
    tpm: limits?.tpm,
    maxParallel: limits?.max_parallel,
    mediaUnitsPerDay: limits?.media_units_per_day,
    budgetUsd: limits?.budget_usd,
    budgetPeriod: limits?.budget_period,
  };
  return {
    defaults: Object.fromEntries(Object.entries(defaults).filter(([, value]) => value !== undefined)) as Limits,
    onStoreDown: limits?.on_store_down ?? 'allow',
    leaseMs: (limits?.lease_seconds ?? 300) * 1000,
    redisUrl,
  };
}

/** `prices:` by model id or alias, and each model's own `price:` under its id and aliases (which win). */
function pricesOf(file: {
  prices?: Record<string, PriceConfig>;
  models: Array<Pick<ModelConfig, 'id' | 'provider' | 'model' | 'aliases' | 'price'>>;
}): Record<string, PriceConfig> {
  const prices: Record<string, PriceConfig> = { ...file.prices };
  for (const model of file.models) {
    if (model.price) {
      for (const name of [model.id ?? `${model.provider}:${model.model}`, ...model.aliases]) {
        prices[name] = model.price;
      }
    }
  }
  return prices;
}
