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
    ...overrides,
  };
}

describe('createMetrics', () => {
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
});
