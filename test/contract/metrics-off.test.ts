/**
 * With metrics turned off (no registry given to the app, as `OMNIGATE_METRICS=false` leaves it), `GET /metrics`
 * with the admin key is a 404 `metrics_disabled`; without the admin key it is still a 401, so whether metrics are
 * on is told to the operator only. No usage record is written for either.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-test-app.js';

describe('GET /metrics with metrics off', () => {
  it('answers 404 metrics_disabled to the admin key and 401 to anyone else', async () => {
    const { app, key, keys, usage } = await createTestApp({ adminKey: 'og-admin-off-test-cccccccccccccccccc' });
    const off = await request(app).get('/metrics').set('authorization', 'Bearer og-admin-off-test-cccccccccccccccccc');
    expect(off.status).toBe(404);
    expect(off.body.error.code).toBe('metrics_disabled');
    expect(off.headers['x-request-id']).toMatch(/^req_/);
    const refused = await request(app).get('/metrics').set('authorization', `Bearer ${key}`);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('admin_key_required');
    const own = (await usage.list({ keyId: (await keys.list())[0]!.id, limit: 10, order: 'desc' })).records;
    expect(own).toEqual([]);
  });
});
