/**
 * OpenTelemetry traces over OTLP/HTTP (protobuf by default, JSON with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), loaded by main.ts with a dynamic import only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set: off, no OpenTelemetry module is loaded (test/contract/startup-imports).
 * Manual spans, no auto-instrumentation, no context manager:
 * - one server span per request (`runRequest`), continuing a caller's W3C `traceparent`, with the request id;
 *   finished with the call's GenAI attributes when its call record is (`callEnded`: after a stream's last token);
 * - one client span per upstream HTTP request (`upstreamStarted`), child of the request's span, whose
 *   `traceparent` goes upstream with the request. The parent is found through the request's abort signal
 *   (`requestSignal`: every upstream call of a request carries it), not through an async context manager:
 *   AsyncLocalStorage on Node 20 runs a hook on every promise, which cost more than the spans themselves.
 *   An upstream request outside any request (the video runner's) starts a trace of its own.
 * The spans are the SDK's export shape (`ReadableSpan`) built here, not the SDK Tracer's Span objects, and go to
 * the SDK's BatchSpanProcessor and OTLP/HTTP exporter; sampling is the SDK's samplers, chosen by
 * `OTEL_TRACES_SAMPLER`/`OTEL_TRACES_SAMPLER_ARG` as the SDK does. Why: bench/README.md, "Observability".
 * Prompt and completion text are left out unless `traceContent` (`OMNIGATE_TRACE_CONTENT=true`).
 * The exporter reads the standard `OTEL_EXPORTER_OTLP_*` variables; the batch processor `OTEL_BSP_*`.
 */
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type HrTime,
  type SpanContext,
  type SpanStatus,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type SpanExporter as ReadableSpanExporter,
  SamplingDecision,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { upstreamFailureCause, type CallOutcome, type Observer, type UpstreamAttempt } from './hooks.js';

/** The GenAI `gen_ai.operation.name` of our operations; others keep their operationId. */
const GEN_AI_OPERATIONS: Record<string, string> = {
  createChatCompletion: 'chat',
  createMessage: 'chat',
  createResponse: 'chat',
  countMessageTokens: 'count_tokens',
  createImage: 'generate_content',
  createSpeech: 'generate_content',
  createMusic: 'generate_content',
  createVideo: 'generate_content',
  createSearchAnswer: 'chat',
  webSearch: 'execute_tool',
};
/** Text attributes are cut here: a span is no place for a whole conversation. */
const CONTENT_LIMIT = 16_384;

export interface TracingOptions {
  serviceName: string;
  version: string;
  traceContent: boolean;
}

export interface Tracing {
  observer: Observer;
  /** Exports what is left; called at shutdown. */
  shutdown(): Promise<void>;
}

function headerGetter() {
  return {
    keys: (carrier: IncomingMessage['headers']) => Object.keys(carrier),
    get: (carrier: IncomingMessage['headers'], key: string) => carrier[key],
  };
}

/** The sampler the SDK builds from `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` (default parent-based always-on). */
export function samplerFromEnv(env: NodeJS.ProcessEnv = process.env): Sampler {
  const ratio = () => {
    const value = Number(env.OTEL_TRACES_SAMPLER_ARG);
    return env.OTEL_TRACES_SAMPLER_ARG && value >= 0 && value <= 1 ? value : 1;
  };
  switch (env.OTEL_TRACES_SAMPLER?.trim()) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** Random ids as hex, cut from a pool refilled by the CSPRNG 4 KiB at a time (one syscall per ~170 spans). */
const idPool = Buffer.allocUnsafe(4096);
let idOffset = idPool.length;
function randomHex(bytes: number): string {
  if (idOffset + bytes > idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const hex = idPool.toString('hex', idOffset, idOffset + bytes);
  idOffset += bytes;
  // An all-zero id is invalid in W3C trace context; 2^-64 odds, but cheap to rule out.
  return /^0+$/.test(hex) ? randomHex(bytes) : hex;
}

/** Milliseconds since the epoch (performance.timeOrigin + now) as an OpenTelemetry [seconds, nanoseconds]. */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6))];
}

const NO_LINKS: never[] = [];
const NO_EVENTS: never[] = [];
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };

/**
 * One recorded (sampled) span, written straight into the SDK's export shape (`ReadableSpan`) for its
 * BatchSpanProcessor and OTLP exporter. The SDK's own Tracer/Span do far more per span than two spans a request
 * need (attribute sanitizing twice, span-limit checks per attribute, its self-metrics, context objects): that
 * was most of what tracing cost the gateway (bench/README.md, "Observability").
 */
class RecordedSpan implements ReadableSpan {
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  endTime: HrTime = [0, 0];
  duration: HrTime = [0, 0];
  status: SpanStatus = UNSET;
  ended = false;
  readonly links = NO_LINKS;
  readonly events = NO_EVENTS;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly startMs: number;

  constructor(
    public name: string,
    kind: SpanKind,
    private readonly context: SpanContext,
    parent: SpanContext | undefined,
    readonly attributes: Attributes,
    readonly resource: Resource,
    readonly instrumentationScope: { name: string; version: string },
  ) {
    this.kind = kind;
    this.parentSpanContext = parent;
    this.startMs = performance.timeOrigin + performance.now();
    this.startTime = hrTime(this.startMs);
  }

  spanContext(): SpanContext {
    return this.context;
  }

  /** Sets the end time; the caller hands the span to the processor. */
  finish(): void {
    const endMs = performance.timeOrigin + performance.now();
    this.endTime = hrTime(endMs);
    this.duration = hrTime(Math.max(0, endMs - this.startMs));
    this.ended = true;
  }
}

/** A request's trace position: its span context, and the recorded span when sampled. */
interface RequestSpan {
  context: SpanContext;
  recorded: RecordedSpan | undefined;
}

const REQUEST_SPAN = Symbol('omnigate.requestSpan');
type Carrier = { [REQUEST_SPAN]?: RequestSpan };

/** `traceparent` (and `tracestate`) of a span context, as W3CTraceContextPropagator.inject writes them. */
function traceHeaders(context: SpanContext): Record<string, string> {
  const headers: Record<string, string> = {
    traceparent: `00-${context.traceId}-${context.spanId}-0${Number(context.traceFlags & TraceFlags.SAMPLED)}`,
  };
  if (context.traceState) {
    headers.tracestate = context.traceState.serialize();
  }
  return headers;
}

/**
 * The batch processor's settings: bigger batches and a longer delay than the SDK's defaults (512 spans, 5 s,
 * queue 2,048) so a busy gateway sends fewer, larger exports and drops nothing at ~2,000 spans/s; each
 * `OTEL_BSP_*` variable still wins when set.
 */
/**
 * The OTLP/HTTP exporter in the encoding `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`
 * names: `http/protobuf` (the OTLP default, and here: its encoder writes the bytes directly and the exports are
 * about a third the size, where JSON first builds the OTLP object tree, then stringifies it) or `http/json`.
 * The protobuf exporter is the one `@opentelemetry/exporter-trace-otlp-proto` builds, from the same parts.
 */
export function traceExporter(env: NodeJS.ProcessEnv = process.env): ReadableSpanExporter {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL ||
    'http/protobuf'
  ).trim();
  if (protocol === 'http/json') {
    return new OTLPTraceExporter();
  }
  return new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
      ProtobufTraceSerializer,
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      undefined,
    ),
  );
}

export function batchSettings(env: NodeJS.ProcessEnv): Record<string, number> {
  const settings: Record<string, number> = {};
  if (!env.OTEL_BSP_MAX_QUEUE_SIZE) settings.maxQueueSize = 16_384;
  if (!env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE) settings.maxExportBatchSize = 2_048;
  return settings;
}

function cut(value: unknown): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > CONTENT_LIMIT ? `${text.slice(0, CONTENT_LIMIT)}…` : text;
}

export function startTracing(options: TracingOptions, env: NodeJS.ProcessEnv = process.env): Tracing {
  const resource = resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.version });
  const scope = { name: 'omnigate', version: options.version };
  const processor = new BatchSpanProcessor(traceExporter(env), batchSettings(env));
  const sampler = samplerFromEnv(env);
  const propagator = new W3CTraceContextPropagator();
  const getter = headerGetter();
  /** The first CONTENT_LIMIT bytes each answer wrote, kept only when content is traced. */
  const answers = new WeakMap<ServerResponse, Buffer[]>();

  /** Copies what the answer writes (JSON, or a stream's events), up to CONTENT_LIMIT bytes. */
  function keepAnswerText(res: ServerResponse): void {
    const pieces: Buffer[] = [];
    let size = 0;
    answers.set(res, pieces);
    const keep = (chunk: unknown, encoding: unknown) => {
      if (size < CONTENT_LIMIT && chunk && typeof chunk !== 'function') {
        const piece =
          typeof chunk === 'string'
            ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
            : Buffer.from(chunk as Uint8Array);
        pieces.push(piece);
        size += piece.length;
      }
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];
  }

  /** The answer's text: a JSON answer's choices/content/output, a stream's events as written. */
  function answerText(res: ServerResponse): string | undefined {
    const pieces = answers.get(res);
    if (!pieces || pieces.length === 0) {
      return undefined;
    }
    const text = Buffer.concat(pieces).toString('utf8');
    if (String(res.getHeader('content-type') ?? '').startsWith('application/json')) {
      try {
        const answer = JSON.parse(text) as Record<string, unknown>;
        return cut(answer.choices ?? answer.content ?? answer.output ?? answer);
      } catch {
        // cut at the limit: fall through to the text itself
      }
    }
    return cut(text);
  }

  function runRequest(req: IncomingMessage, res: ServerResponse, requestId: string, next: () => void): void {
    // Without a caller's `traceparent` there is no parent to extract (the common case costs no context objects).
    const parentContext =
      req.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, req.headers, getter);
    const parent = parentContext === ROOT_CONTEXT ? undefined : trace.getSpanContext(parentContext);
    const traceId = parent?.traceId ?? randomHex(16);
    const attributes: Attributes = {
      'http.request.method': req.method ?? 'GET',
      'url.path': (req.url ?? '/').split('?')[0],
      'omnigate.request_id': requestId,
    };
    const name = req.method ?? 'GET';
    const sampled =
      sampler.shouldSample(parentContext, traceId, name, SpanKind.SERVER, attributes, NO_LINKS).decision ===
      SamplingDecision.RECORD_AND_SAMPLED;
    const context: SpanContext = {
      traceId,
      spanId: randomHex(8),
      traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      traceState: parent?.traceState,
    };
    (res as Carrier)[REQUEST_SPAN] = {
      context,
      recorded: sampled
        ? new RecordedSpan(name, SpanKind.SERVER, context, parent, attributes, resource, scope)
        : undefined,
    };
    if (options.traceContent && sampled) {
      keepAnswerText(res);
    }
    next();
  }

  function requestSignal(signal: AbortSignal, res: ServerResponse): void {
    const span = (res as Carrier)[REQUEST_SPAN];
    if (span) {
      (signal as Carrier)[REQUEST_SPAN] = span;
    }
  }

  function callEnded(outcome: CallOutcome, res: ServerResponse): void {
    const carrier = res as Carrier;
    const span = carrier[REQUEST_SPAN]?.recorded;
    if (!span || span.ended) {
      return;
    }
    const operationName = GEN_AI_OPERATIONS[outcome.operation] ?? outcome.operation;
    const attributes = span.attributes as Record<string, string | number>;
    attributes['http.response.status_code'] = outcome.status;
    attributes['omnigate.operation'] = outcome.operation;
    attributes['gen_ai.operation.name'] = operationName;
    if (outcome.modelRequested !== null) {
      attributes['gen_ai.request.model'] = outcome.modelRequested;
    }
    if (outcome.model !== null) {
      attributes['gen_ai.response.model'] = outcome.model;
    }
    if (outcome.provider !== null) {
      attributes['gen_ai.provider.name'] = outcome.provider;
    }
    if (outcome.usage) {
      attributes['gen_ai.usage.input_tokens'] = outcome.usage.inputTokens;
      attributes['gen_ai.usage.output_tokens'] = outcome.usage.outputTokens;
    }
    if (outcome.errorCode) {
      attributes['error.type'] = outcome.errorCode;
    }
    if (options.traceContent) {
      const body = (res as unknown as { req?: { body?: Record<string, unknown> } }).req?.body;
      const input = cut(body && typeof body === 'object' ? (body.messages ?? body.input ?? body.prompt) : undefined);
      if (input !== undefined) {
        attributes['gen_ai.input.messages'] = input;
      }
      const output = answerText(res);
      if (output !== undefined) {
        attributes['gen_ai.output.messages'] = output;
      }
    }
    span.name = outcome.model
      ? `${operationName} ${outcome.model}`
      : `${(res as unknown as { req?: { method?: string } }).req?.method ?? 'GET'} ${outcome.operation}`;
    if (outcome.status >= 500) {
      span.status = { code: SpanStatusCode.ERROR };
    }
    span.finish();
    processor.onEnd(span);
  }

  function upstreamStarted(providerId: string, method: string, path: string, signal: AbortSignal): UpstreamAttempt {
    const parent = (signal as Carrier)[REQUEST_SPAN]?.context;
    // Outside a request (the video runner), a trace of its own, sampled as a root span.
    const traceId = parent?.traceId ?? randomHex(16);
    const sampled = parent
      ? (parent.traceFlags & TraceFlags.SAMPLED) !== 0
      : sampler.shouldSample(ROOT_CONTEXT, traceId, `${method} ${providerId}`, SpanKind.CLIENT, {}, NO_LINKS)
          .decision === SamplingDecision.RECORD_AND_SAMPLED;
    const context: SpanContext = {
      traceId,
      spanId: randomHex(8),
      traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      traceState: parent?.traceState,
    };
    const headers = traceHeaders(context);
    if (!sampled) {
      return { headers, end: () => undefined };
    }
    const span = new RecordedSpan(
      `${method} ${providerId}`,
      SpanKind.CLIENT,
      context,
      parent,
      { 'http.request.method': method, 'url.path': path, 'gen_ai.provider.name': providerId },
      resource,
      scope,
    );
    return {
      headers,
      end(error, cause) {
        if (span.ended) {
          return;
        }
        if (error !== undefined) {
          const type = cause ?? upstreamFailureCause(error);
          (span.attributes as Record<string, string>)['error.type'] = type;
          span.status = { code: SpanStatusCode.ERROR, message: type };
        }
        span.finish();
        processor.onEnd(span);
      },
    };
  }

  return {
    observer: { runRequest, requestSignal, callEnded, upstreamStarted },
    shutdown: () => processor.shutdown(),
  };
}
