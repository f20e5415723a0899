import { describe, expect, it } from 'vitest';
import type { CallOutcome } from './hooks.js';
import { createMetrics } from './metrics.js';
import { parsePrometheusText, sampleValue } from '../../test/helpers/prometheus-text.js';

const response = { once: () => undefined } as never;

function outcome(overrides: Partial<CallOutcome>): CallOutcome {
  return {
    operation: 'createImage',
    modelRequested: 'local:image',
    model: 'local:image',
    provider: 'local',
    usage: null,
    units: null,
    media: null,
    status: 200,
    startedAt: performance.now() - 5,
    headAt: undefined,
    errorCode: undefined,
    keyId: 'key_a',
    costUsd: 0,
    ...overrides,
  };
}

describe('createMetrics', () => {
  it('counts attempts and failures per deployment by cause, and shows each circuit; unknown deployments are other', async () => {
    const metrics = createMetrics({
      models: [],
      providers: [],
      perKey: false,
      sources: {},
      deployments: ['east:gpt-4o', 'west:gpt-4o'],
    });
    const observer = metrics.observer;
    observer.deploymentAttempt!('east:gpt-4o', 'timeout');
    observer.deploymentAttempt!('east:gpt-4o', 'timeout');
    observer.deploymentAttempt!('west:gpt-4o', null);
    observer.deploymentAttempt!('someone:else', 'status_5xx');
    observer.circuitChanged!('east:gpt-4o', 'open');
    const text = parsePrometheusText(await metrics.render());
    expect(
      sampleValue(text, 'omnigate_deployment_attempts_total', { deployment: 'east:gpt-4o', outcome: 'timeout' }),
    ).toBe(2);
    expect(sampleValue(text, 'omnigate_deployment_attempts_total', { deployment: 'west:gpt-4o', outcome: 'ok' })).toBe(
      1,
    );
    expect(
      sampleValue(text, 'omnigate_deployment_failures_total', { deployment: 'east:gpt-4o', cause: 'timeout' }),
    ).toBe(2);
    expect(sampleValue(text, 'omnigate_deployment_failures_total', { deployment: 'other', cause: 'status_5xx' })).toBe(
      1,
    );
    expect(sampleValue(text, 'omnigate_circuit_state', { deployment: 'east:gpt-4o' })).toBe(2);
    expect(sampleValue(text, 'omnigate_circuit_state', { deployment: 'west:gpt-4o' })).toBe(0);
  });

  it('counts media units and 429 reasons, and labels by key only when asked', async () => {
    const perKey = createMetrics({ models: ['local:image'], providers: ['local'], perKey: true, sources: {} });
    perKey.observer.callEnded!(outcome({ media: { images: 2, pixels: 2048 } }), response);
    perKey.observer.callEnded!(outcome({ media: { images: 1 }, keyId: 'key_b' }), response);
    perKey.observer.callEnded!(outcome({ status: 429, errorCode: 'key_jobs_limit', keyId: 'key_b' }), response);
    perKey.observer.callEnded!(outcome({ status: 429, errorCode: 'Not A Code!' }), response);
    const text = parsePrometheusText(await perKey.render());
    expect(sampleValue(text, 'omnigate_media_units_total', { model: 'local:image', unit: 'images' })).toBe(3);
    expect(sampleValue(text, 'omnigate_media_units_total', { model: 'local:image', unit: 'pixels' })).toBe(2048);
    expect(sampleValue(text, 'omnigate_refusals_total', { reason: 'key_jobs_limit' })).toBe(1);
    expect(sampleValue(text, 'omnigate_refusals_total', { reason: 'other' })).toBe(1);
    expect(
      sampleValue(text, 'omnigate_requests_total', {
        operation: 'createImage',
        status_class: '2xx',
        model: 'local:image',
        key_id: 'key_b',
      }),
    ).toBe(1);
    expect(
      sampleValue(text, 'omnigate_requests_total', {
        operation: 'createImage',
        status_class: '4xx',
        model: 'local:image',
        key_id: 'key_b',
      }),
    ).toBe(1);
    expect(
      sampleValue(text, 'omnigate_requests_total', {
        operation: 'createImage',
        status_class: '2xx',
        model: 'local:image',
        key_id: 'key_a',
      }),
    ).toBe(1);

    const shared = createMetrics({ models: ['local:image'], providers: ['local'], perKey: false, sources: {} });
    shared.observer.callEnded!(outcome({}), response);
    shared.observer.callEnded!(outcome({ keyId: 'key_b', model: 'made-up' }), response);
    const plain = parsePrometheusText(await shared.render());
    expect(
      sampleValue(plain, 'omnigate_requests_total', {
        operation: 'createImage',
        status_class: '2xx',
        model: 'local:image',
      }),
    ).toBe(1);
    expect(
      sampleValue(plain, 'omnigate_requests_total', { operation: 'createImage', status_class: '2xx', model: 'other' }),
    ).toBe(1);
    expect(plain.samples.some((sample) => 'key_id' in sample.labels)).toBe(false);
  });

  it("adds each call's cost to omnigate_cost_usd_total by model; an unknown model counts as other", async () => {
    const metrics = createMetrics({ models: ['up:gpt'], providers: ['up'], perKey: false, sources: {} });
    const observer = metrics.observer;
    observer.callEnded!(outcome({ model: 'up:gpt', costUsd: 0.25 }), response);
    observer.callEnded!(outcome({ model: 'up:gpt', costUsd: 0.5 }), response);
    observer.callEnded!(outcome({ model: 'elsewhere', costUsd: 0.125 }), response);
    observer.callEnded!(outcome({ model: 'local:image', costUsd: 0 }), response);
    const text = parsePrometheusText(await metrics.render());
    expect(sampleValue(text, 'omnigate_cost_usd_total', { model: 'up:gpt' })).toBe(0.75);
    expect(sampleValue(text, 'omnigate_cost_usd_total', { model: 'other' })).toBe(0.125);
  });
});
