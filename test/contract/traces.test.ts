/**
 * Traces of the started server, received by an OTLP/HTTP collector started here on loopback (the exporter
 * posts JSON): a server span per request continuing the caller's `traceparent`, with the request id and the
 * GenAI attributes; a client span per upstream request, child of the server span, whose `traceparent` the
 * fake upstream receives; no prompt or completion text unless OMNIGATE_TRACE_CONTENT=true.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sendJson } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';

const API_KEY = 'og-traces-test-key-aaaaaaaaaaaaaaaaaaaaa';
const PROMPT = 'a secret prompt about zebras';
const ANSWER = 'an answer about striped horses';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: number | string; boolValue?: boolean } }>;
}

interface Collector {
  url: string;
  spans: OtlpSpan[];
  contentTypes: string[];
  /** The bodies of protobuf exports, undecoded. */
  protobufBodies: Buffer[];
  close(): Promise<void>;
}

/** A minimal OTLP/HTTP trace collector: decodes each JSON export into its spans. */
async function startCollector(): Promise<Collector> {
  const spans: OtlpSpan[] = [];
  const contentTypes: string[] = [];
  const protobufBodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const pieces: Buffer[] = [];
    req.on('data', (piece: Buffer) => pieces.push(piece));
    req.on('end', () => {
      contentTypes.push(String(req.headers['content-type']));
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/x-protobuf') {
        protobufBodies.push(Buffer.concat(pieces));
      } else if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(pieces).toString('utf8')) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
        };
        for (const resource of body.resourceSpans) {
          for (const scope of resource.scopeSpans) {
            spans.push(...scope.spans);
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    protobufBodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  killServers();
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function setUp(
  extra: Record<string, string>,
): Promise<{ base: string; upstream: FakeUpstream; collector: Collector }> {
  const upstream = await startFakeUpstream((_request, res) => {
    sendJson(
      res,
      200,
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1767225600,
        model: 'good',
        choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 },
      }),
    );
  });
  const collector = await startCollector();
  closers.push(
    () => upstream.close(),
    () => collector.close(),
  );
  const dir = dataDir();
  const config = path.join(dir, 'omnigate.yaml');
  writeFileSync(
    config,
    `providers:\n  up:\n    type: openai-compatible\n    base_url: ${upstream.origin}/v1\nmodels:\n  - { provider: up, model: good }\naliases:\n  fast: up:good\n`,
  );
  const server = await startServer({
    OMNIGATE_DATA_DIR: dir,
    OMNIGATE_API_KEYS: API_KEY,
    OMNIGATE_CONFIG: config,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    ...extra,
  });
  return { base: `http://127.0.0.1:${server.port}`, upstream, collector };
}

async function chat(base: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}`, ...headers },
    body: JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: PROMPT }] }),
  });
}

async function spansOf(collector: Collector, traceId: string, count: number): Promise<OtlpSpan[]> {
  for (let tries = 0; tries < 200; tries++) {
    const found = collector.spans.filter((span) => span.traceId === traceId);
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${count} spans of trace ${traceId} arrived: ${JSON.stringify(collector.spans)}`);
}

describe('OpenTelemetry traces', () => {
  it("continues the caller's trace: a server span with the request id and GenAI attributes, a client span under it whose traceparent goes upstream, no content", {
    timeout: 180_000,
  }, async () => {
    const { base, upstream, collector } = await setUp({});
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpanId = '00f067aa0ba902b7';
    const response = await chat(base, { traceparent: `00-${traceId}-${callerSpanId}-01` });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');

    const spans = await spansOf(collector, traceId, 2);
    expect(collector.contentTypes).toContain('application/json');
    const serverSpan = spans.find((span) => span.kind === 2);
    const clientSpan = spans.find((span) => span.kind === 3);
    expect(serverSpan).toBeDefined();
    expect(clientSpan).toBeDefined();
    // The tree: caller → server span → client span.
    expect(serverSpan!.parentSpanId).toBe(callerSpanId);
    expect(clientSpan!.parentSpanId).toBe(serverSpan!.spanId);
    // The upstream got our client span's context, not the caller's header passed through.
    expect(upstream.requests.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${clientSpan!.spanId}-01`);

    expect(attribute(serverSpan!, 'omnigate.request_id')).toBe(requestId);
    expect(attribute(serverSpan!, 'gen_ai.operation.name')).toBe('chat');
    expect(attribute(serverSpan!, 'gen_ai.request.model')).toBe('fast');
    expect(attribute(serverSpan!, 'gen_ai.response.model')).toBe('up:good');
    expect(attribute(serverSpan!, 'gen_ai.usage.input_tokens')).toBe(12);
    expect(attribute(serverSpan!, 'gen_ai.usage.output_tokens')).toBe(8);
    expect(attribute(serverSpan!, 'http.response.status_code')).toBe(200);
    expect(attribute(clientSpan!, 'gen_ai.provider.name')).toBe('up');
    // No prompt or completion text anywhere without the opt-in.
    const everything = JSON.stringify(spans);
    expect(everything).not.toContain('zebras');
    expect(everything).not.toContain('striped');

    // A request without a traceparent starts a trace of its own.
    const fresh = await chat(base);
    expect(fresh.status).toBe(200);
    const sent = String(upstream.requests.at(-1)!.headers.traceparent);
    const freshTrace = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent);
    expect(freshTrace).not.toBeNull();
    expect(freshTrace![1]).not.toBe(traceId);
    const freshSpans = await spansOf(collector, freshTrace![1], 2);
    expect(freshSpans.find((span) => span.kind === 2)!.parentSpanId ?? '').toBe('');
  });

  it('puts prompt and completion text in the server span when OMNIGATE_TRACE_CONTENT=true', {
    timeout: 180_000,
  }, async () => {
    const { base, collector } = await setUp({ OMNIGATE_TRACE_CONTENT: 'true' });
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    expect((await chat(base, { traceparent: `00-${traceId}-b7ad6b7169203331-01` })).status).toBe(200);
    const serverSpan = (await spansOf(collector, traceId, 2)).find((span) => span.kind === 2)!;
    expect(String(attribute(serverSpan, 'gen_ai.input.messages'))).toContain(PROMPT);
    expect(String(attribute(serverSpan, 'gen_ai.output.messages'))).toContain(ANSWER);
  });

  it('exports OTLP/HTTP protobuf by default: the spans of a traced request arrive as application/x-protobuf', {
    timeout: 180_000,
  }, async () => {
    const { base, collector } = await setUp({ OTEL_EXPORTER_OTLP_PROTOCOL: '' });
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4737';
    const response = await chat(base, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(response.status).toBe(200);
    const requestId = String(response.headers.get('x-request-id'));
    // Protobuf carries ids as raw bytes and strings as UTF-8: the export holds the trace id (once per span),
    // the request id and the GenAI attribute names and values.
    const traceBytes = Buffer.from(traceId, 'hex');
    const count = (body: Buffer, needle: Buffer) => {
      let found = 0;
      for (let at = body.indexOf(needle); at >= 0; at = body.indexOf(needle, at + 1)) found++;
      return found;
    };
    for (let tries = 0; tries < 200 && collector.protobufBodies.every((body) => count(body, traceBytes) < 2); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const body = collector.protobufBodies.find((piece) => count(piece, traceBytes) >= 2);
    expect(body).toBeDefined();
    expect(collector.contentTypes).not.toContain('application/json');
    for (const text of [
      requestId,
      'omnigate.request_id',
      'gen_ai.request.model',
      'fast',
      'gen_ai.response.model',
      'up:good',
    ]) {
      expect(body!.includes(Buffer.from(text))).toBe(true);
    }
    expect(body!.includes(Buffer.from('zebras'))).toBe(false);
  });
});
