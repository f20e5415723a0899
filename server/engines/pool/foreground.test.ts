/**
 * The foreground signal: every request the app starts moves the shared counter (whatever its route or answer),
 * and the extraction writer pauses longer after a write while the counter moves.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../../../test/helpers/create-test-app.js';
import { PAUSE_PER_WRITE, PAUSE_PER_WRITE_WHILE_SERVING, pauseAfterWrite } from '../text/index-passages.js';
import { foregroundCount, foregroundRequests } from './foreground.js';

describe('foreground requests', () => {
  it('counts each request the app starts, answered or refused', async () => {
    const { app } = await createTestApp();
    const before = foregroundCount(foregroundRequests);
    await request(app).get('/health');
    await request(app).get('/v1/models');
    await request(app).post('/v1/chat/completions').send({});
    expect(foregroundCount(foregroundRequests) - before).toBe(3);
  });

  it('paces the extraction writer by whether requests arrived since its last write', () => {
    expect(pauseAfterWrite(2, false)).toBe(2 * PAUSE_PER_WRITE);
    expect(pauseAfterWrite(2, true)).toBe(2 * PAUSE_PER_WRITE_WHILE_SERVING);
    expect(PAUSE_PER_WRITE_WHILE_SERVING).toBeGreaterThan(PAUSE_PER_WRITE);
    // A write too short to measure still leaves the lock free a moment.
    expect(pauseAfterWrite(0, false)).toBeGreaterThan(0);
  });
});
