/**
 * The tracing observer's sampling, in process (no export: an unsampled span is never recorded, so nothing is
 * sent). The spans' content and the export are tested against a collector in test/contract/traces.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { batchSettings, samplerFromEnv, startTracing } from './tracing.js';

function tracedRequest(env: NodeJS.ProcessEnv, traceparent?: string): string | undefined {
  const tracing = startTracing({ serviceName: 'test', version: '0', traceContent: false }, env);
  const req = { method: 'POST', url: '/v1/chat/completions', headers: traceparent ? { traceparent } : {} };
  const res = { req } as never;
  const signal = new AbortController().signal;
  tracing.observer.runRequest!(req as never, res, 'req_1', () => undefined);
  tracing.observer.requestSignal!(signal, res);
  const attempt = tracing.observer.upstreamStarted!('up', 'POST', '/chat/completions', signal);
  return attempt.headers?.traceparent;
}

describe('tracing sampler', () => {
  it('builds the sampler OTEL_TRACES_SAMPLER names, parent-based always-on by default', () => {
    expect(samplerFromEnv({}).toString()).toContain('ParentBased{root=AlwaysOnSampler');
    expect(
      samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }).toString(),
    ).toContain('TraceIdRatioBased{0.1}');
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
  });

  it('sends a sampled traceparent upstream by default, an unsampled one (flags 00) when the sampler drops the trace', () => {
    expect(tracedRequest({})).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(tracedRequest({ OTEL_TRACES_SAMPLER: 'always_off' })).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    // Parent-based: a caller's unsampled trace stays unsampled, in the same trace.
    const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
    expect(tracedRequest({}, caller)).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$/);
  });

  it('batches 2,048 spans an export from a 16,384-span queue unless OTEL_BSP_* says otherwise', () => {
    expect(batchSettings({})).toEqual({ maxQueueSize: 16_384, maxExportBatchSize: 2_048 });
    // Set, the variable wins: the SDK's processor reads it when the setting is absent.
    expect(batchSettings({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10' })).toEqual({});
  });
});
