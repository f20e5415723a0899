/**
 * The Prometheus metrics (prom-client), loaded by main.ts only when metrics are on. One registry per process:
 * the per-call counters and histograms are fed by the hooks (hooks.ts), the gauges of things that already keep
 * their own state (the media pool, the video queue, the usage buffer) are read when scraped, and Node's process
 * metrics (CPU, memory, GC, event-loop delay) come from `collectDefaultMetrics`.
 *
 * Labels are bounded: an operation is an operationId of the contract, a model a model id of the registry (else
 * `other`, or `none` for calls that named none), a provider a configured provider id, a reason one of our own
 * error codes. The API key id is a label only when `perKey` is set.
 *
 * Cheap on the hot path: the series every call or upstream request feeds are tallies (tallies.ts), looked up
 * once per label set and kept, so a request costs a few map reads and additions, not prom-client's label
 * validation and hashing per metric; the rarer series (refusals, failures, media units, cost) use prom-client's.
 */
import type { ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { CallOutcome, Observer, UpstreamAttempt } from './hooks.js';
import { upstreamFailureCause } from './hooks.js';
import { type CounterTally, talliedCounter, talliedHistogram } from './tallies.js';

/** Seconds; resolves 1 ms to 60 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

const TOKEN_KINDS = [
  ['input', 'inputTokens'],
  ['output', 'outputTokens'],
  ['cached_input', 'cacheReadTokens'],
  ['cache_write', 'cacheWriteTokens'],
  ['reasoning', 'reasoningTokens'],
] as const;
const MEDIA_UNITS = ['images', 'pixels', 'characters', 'seconds', 'bytes', 'queries', 'results'] as const;
const ERROR_CODE = /^[a-z0-9_]{1,64}$/;

export interface MetricSources {
  /** The media pool's slots and queue. */
  mediaPool?: () => { size: number; busy: number; queued: number };
  /** Video tasks by state (queued, processing, completed, failed). */
  /** Read from the database when scraped (never on a request's path). */
  videoTasks?: () => Promise<Record<string, number>>;
  /** The usage recorder's buffer. */
  usage?: () => { depth: number; dropped: number; failedWrites: number };
}

export interface MetricsOptions {
  /** Model ids of the registry: the only values of the `model` label besides `other` and `none`. */
  models: readonly string[];
  /** Configured provider ids (and `local`): the only values of the `provider` label besides `other`. */
  providers: readonly string[];
  perKey: boolean;
  sources: MetricSources;
  /** Deployment ids of models with deployments (providers/resilience/): the `deployment` label's values besides `other`. */
  deployments?: readonly string[];
  /** A worker of `--workers N`: a scrape answers the whole cluster's metrics, gathered by the primary. */
  clusterRender?: (register: Registry) => () => Promise<string>;
}

export interface Metrics {
  observer: Observer;
  /** The exposition text. */
  render(): Promise<string>;
  contentType: string;
}

interface CallSeries {
  requests: CounterTally;
  tokens: CounterTally[];
}

export function createMetrics(options: MetricsOptions): Metrics {
  const register = new Registry();
  collectDefaultMetrics({ register });
  const models = new Set(options.models);
  const providers = new Set(options.providers);
  const keyLabel = options.perKey ? ['key_id'] : [];

  // The per-call series are tallies (tallies.ts): on the request path they are additions.
  const requests = talliedCounter(
    register,
    'omnigate_requests_total',
    'Requests answered, by operation (operationId), status class and model.',
    ['operation', 'status_class', 'model', ...keyLabel],
  );
  const durations = talliedHistogram(
    register,
    'omnigate_request_duration_seconds',
    'From the request arriving to its call record being finalised (a stream: after its last token), by operation.',
    'operation',
    LATENCY_BUCKETS,
  );
  const firstBytes = talliedHistogram(
    register,
    'omnigate_time_to_first_byte_seconds',
    'From the request arriving to the response head being written (a stream: with its first event), by operation.',
    'operation',
    LATENCY_BUCKETS,
  );
  const tokens = talliedCounter(
    register,
    'omnigate_tokens_total',
    'Tokens of answered calls, by model and type (input, output, cached_input, cache_write, reasoning).',
    ['model', 'type', ...keyLabel],
  );
  const cost = new Counter({
    name: 'omnigate_cost_usd_total',
    help: "Cost of answered calls in US dollars by the price table, by model (the usage records' cost_usd).",
    labelNames: ['model'],
    registers: [register],
  });
  const mediaUnits = new Counter({
    name: 'omnigate_media_units_total',
    help: 'What media, file and search calls produced, by model and unit (images, pixels, characters, seconds, bytes, queries, results).',
    labelNames: ['model', 'unit'],
    registers: [register],
  });
  const upstreamRequests = talliedCounter(
    register,
    'omnigate_upstream_requests_total',
    'HTTP requests sent to upstream providers, by provider.',
    ['provider'],
  );
  const upstreamFailures = new Counter({
    name: 'omnigate_upstream_failures_total',
    help: 'Upstream requests that failed, by provider and cause (timeout, unreachable, rate_limited, status_4xx, status_5xx, body_interrupted, client_closed, other).',
    labelNames: ['provider', 'cause'],
    registers: [register],
  });
  const limitsStoreFailures = new Counter({
    name: 'omnigate_limits_store_failures_total',
    help: 'Times the limit counters (Redis) could not be reached; limits.on_store_down decided those calls.',
    registers: [register],
  });
  const refusals = new Counter({
    name: 'omnigate_refusals_total',
    help: 'Requests refused with 429, by reason (the error code: key_jobs_limit, engine_busy, rate_limit_exceeded, …).',
    labelNames: ['reason'],
    registers: [register],
  });
  const openStreams = new Gauge({
    name: 'omnigate_open_streams',
    help: 'Server-sent-event answers in progress.',
    registers: [register],
  });
  const { mediaPool, videoTasks, usage } = options.sources;
  /** A gauge read from state kept elsewhere, when scraped. */
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [register],
      collect() {
        this.set(read());
      },
    });
  gauge(
    'omnigate_media_pool_slots',
    'Slots of the media worker pool (OMNIGATE_MEDIA_WORKERS).',
    () => mediaPool?.().size ?? 0,
  );
  gauge('omnigate_media_pool_slots_busy', 'Media pool slots running a generation.', () => mediaPool?.().busy ?? 0);
  gauge(
    'omnigate_media_pool_queue_length',
    'Generations waiting for a media pool slot.',
    () => mediaPool?.().queued ?? 0,
  );
  new Gauge({
    name: 'omnigate_video_tasks',
    help: 'Video tasks in the database, by state.',
    labelNames: ['state'],
    registers: [register],
    async collect() {
      const counts = (await videoTasks?.()) ?? {};
      for (const state of ['queued', 'processing', 'completed', 'failed']) {
        this.set({ state }, counts[state] ?? 0);
      }
    },
  });
  gauge(
    'omnigate_usage_buffer_depth',
    'Usage records waiting to be written to the database.',
    () => usage?.().depth ?? 0,
  );
  new Counter({
    name: 'omnigate_usage_records_dropped_total',
    help: 'Usage records given up on: new records while the buffer was full (OMNIGATE_USAGE_BUFFER_MAX) because the database took no writes, and records still unwritten when a stop gave up.',
    registers: [register],
    collect() {
      this.reset();
      this.inc(usage?.().dropped ?? 0);
    },
  });
  new Counter({
    name: 'omnigate_usage_write_failures_total',
    help: 'Usage batch writes that failed (and were queued again).',
    registers: [register],
    collect() {
      this.reset();
      this.inc(usage?.().failedWrites ?? 0);
    },
  });

  const series = new Map<string, CallSeries>();
  function modelLabel(model: string | null): string {
    return model === null ? 'none' : models.has(model) ? model : 'other';
  }

  function callSeries(operation: string, statusClass: string, model: string, keyId: string | undefined): CallSeries {
    const id = `${operation}\u0000${statusClass}\u0000${model}\u0000${keyId ?? ''}`;
    let found = series.get(id);
    if (!found) {
      const key: Record<string, string> = options.perKey ? { key_id: keyId ?? 'none' } : {};
      found = {
        requests: requests.series(id, () => ({ operation, status_class: statusClass, model, ...key })),
        tokens: TOKEN_KINDS.map(([type]) =>
          tokens.series(`${model}\u0000${type}\u0000${keyId ?? ''}`, () => ({ model, type, ...key })),
        ),
      };
      series.set(id, found);
    }
    return found;
  }

  function callEnded(outcome: CallOutcome): void {
    const end = performance.now();
    const model = modelLabel(outcome.model);
    const status = outcome.status;
    const calls = callSeries(
      outcome.operation,
      status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other',
      model,
      outcome.keyId,
    );
    calls.requests.value++;
    durations.series(outcome.operation).observe((end - outcome.startedAt) / 1000);
    if (outcome.headAt !== undefined) {
      firstBytes.series(outcome.operation).observe((outcome.headAt - outcome.startedAt) / 1000);
    }
    const usage = outcome.usage;
    if (usage) {
      for (let index = 0; index < TOKEN_KINDS.length; index++) {
        // index < TOKEN_KINDS.length, and calls.tokens is TOKEN_KINDS mapped.
        const amount = usage[TOKEN_KINDS[index]![1]];
        if (amount) {
          calls.tokens[index]!.value += amount;
        }
      }
    }
    const media = outcome.media;
    if (media) {
      for (const unit of MEDIA_UNITS) {
        const amount = media[unit];
        if (amount) {
          mediaUnits.inc({ model, unit }, amount);
        }
      }
    }
    if (outcome.costUsd > 0) {
      cost.inc({ model }, outcome.costUsd);
    }
    if (status === 429) {
      refusals.inc({ reason: outcome.errorCode && ERROR_CODE.test(outcome.errorCode) ? outcome.errorCode : 'other' });
    }
  }

  function upstreamStarted(provider: string): UpstreamAttempt {
    const label = providers.has(provider) ? provider : 'other';
    upstreamRequests.series(label, () => ({ provider: label })).value++;
    let ended = false;
    return {
      headers: undefined,
      end(error, cause) {
        if (ended) {
          return;
        }
        ended = true;
        if (error !== undefined) {
          upstreamFailures.inc({ provider: label, cause: cause ?? upstreamFailureCause(error) });
        }
      },
    };
  }

  const deployments = new Set(options.deployments ?? []);
  const deploymentAttempts = new Counter({
    name: 'omnigate_deployment_attempts_total',
    help: 'Attempts of the retry layer on a deployment, by deployment and outcome (ok or the failure cause).',
    labelNames: ['deployment', 'outcome'],
    registers: [register],
  });
  const deploymentFailures = new Counter({
    name: 'omnigate_deployment_failures_total',
    help: 'Failed attempts on a deployment, by deployment and cause (timeout, rate_limited, status_5xx, unreachable, ...).',
    labelNames: ['deployment', 'cause'],
    registers: [register],
  });
  const circuitState = new Gauge({
    name: 'omnigate_circuit_state',
    help: "A deployment's circuit as this instance last saw it: 0 closed, 1 half-open (one probe), 2 open.",
    labelNames: ['deployment'],
    registers: [register],
  });
  const CIRCUIT_VALUES = { closed: 0, 'half-open': 1, open: 2 } as const;
  for (const id of deployments) {
    circuitState.set({ deployment: id }, 0);
  }
  const deploymentLabel = (id: string) => (deployments.has(id) ? id : 'other');

  function deploymentAttempt(deployment: string, cause: string | null): void {
    const label = deploymentLabel(deployment);
    deploymentAttempts.inc({ deployment: label, outcome: cause ?? 'ok' });
    if (cause !== null) {
      deploymentFailures.inc({ deployment: label, cause });
    }
  }

  function circuitChanged(deployment: string, state: 'closed' | 'half-open' | 'open'): void {
    circuitState.set({ deployment: deploymentLabel(deployment) }, CIRCUIT_VALUES[state]);
  }

  function streamOpened(res: ServerResponse): void {
    openStreams.inc();
    res.once('close', () => openStreams.dec());
  }

  return {
    observer: {
      callEnded,
      upstreamStarted,
      streamOpened,
      deploymentAttempt,
      circuitChanged,
      limitsStoreFailed: () => limitsStoreFailures.inc(),
    },
    render: options.clusterRender ? options.clusterRender(register) : () => register.metrics(),
    contentType: register.contentType,
  };
}
