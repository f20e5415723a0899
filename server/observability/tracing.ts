/**
 * OpenTelemetry traces over OTLP/HTTP (JSON), loaded by main.ts with a dynamic import only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set: off, no OpenTelemetry module is loaded (test/contract/startup-imports).
 * Manual spans, no auto-instrumentation:
 * - one server span per request (`runRequest`), continuing a caller's W3C `traceparent`, with the request id;
 *   finished with the call's GenAI attributes when its call record is (`callEnded`: after a stream's last token);
 * - one client span per upstream HTTP request (`upstreamStarted`), child of the request's span, whose
 *   `traceparent` goes upstream with the request. The parent is found through the request's abort signal
 *   (`requestSignal`: every upstream call of a request carries it), not through an async context manager:
 *   AsyncLocalStorage on Node 20 runs a hook on every promise, which cost more than the spans themselves.
 *   An upstream request outside any request (the video runner's) starts a trace of its own.
 * Prompt and completion text are left out unless `traceContent` (`OMNIGATE_TRACE_CONTENT=true`).
 * The exporter reads the standard `OTEL_EXPORTER_OTLP_*` variables; the batch processor `OTEL_BSP_*`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
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

function cut(value: unknown): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > CONTENT_LIMIT ? `${text.slice(0, CONTENT_LIMIT)}…` : text;
}

export function startTracing(options: TracingOptions): Tracing {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const propagator = new W3CTraceContextPropagator();
  const tracer = provider.getTracer('omnigate', options.version);
  const getter = headerGetter();
  const spans = new WeakMap<ServerResponse, Span>();
  /** The server span of the request each abort signal belongs to. */
  const signalSpans = new WeakMap<AbortSignal, Span>();
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
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, getter);
    const span = tracer.startSpan(
      `${req.method ?? 'GET'}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method ?? 'GET',
          'url.path': (req.url ?? '/').split('?')[0],
          'omnigate.request_id': requestId,
        },
      },
      parent,
    );
    spans.set(res, span);
    if (options.traceContent) {
      keepAnswerText(res);
    }
    next();
  }

  function requestSignal(signal: AbortSignal, res: ServerResponse): void {
    const span = spans.get(res);
    if (span) {
      signalSpans.set(signal, span);
    }
  }

  function callEnded(outcome: CallOutcome, res: ServerResponse): void {
    const span = spans.get(res);
    if (!span) {
      return;
    }
    spans.delete(res);
    const operationName = GEN_AI_OPERATIONS[outcome.operation] ?? outcome.operation;
    const attributes: Attributes = {
      'http.response.status_code': outcome.status,
      'omnigate.operation': outcome.operation,
      'gen_ai.operation.name': operationName,
    };
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
    span.setAttributes(attributes);
    span.updateName(
      outcome.model
        ? `${operationName} ${outcome.model}`
        : `${(res as unknown as { req?: { method?: string } }).req?.method ?? 'GET'} ${outcome.operation}`,
    );
    if (outcome.status >= 500) {
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  function upstreamStarted(providerId: string, method: string, path: string, signal: AbortSignal): UpstreamAttempt {
    const parent = signalSpans.get(signal);
    const active = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    const span = tracer.startSpan(
      `${method} ${providerId}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'http.request.method': method, 'url.path': path, 'gen_ai.provider.name': providerId },
      },
      active,
    );
    const headers: Record<string, string> = {};
    propagator.inject(trace.setSpan(active, span), headers, {
      set: (carrier, key, value) => {
        carrier[key] = value;
      },
    });
    let ended = false;
    return {
      headers,
      end(error, cause) {
        if (ended) {
          return;
        }
        ended = true;
        if (error !== undefined) {
          const type = cause ?? upstreamFailureCause(error);
          span.setAttribute('error.type', type);
          span.setStatus({ code: SpanStatusCode.ERROR, message: type });
        }
        span.end();
      },
    };
  }

  return {
    observer: { runRequest, requestSignal, callEnded, upstreamStarted },
    shutdown: () => provider.shutdown(),
  };
}
