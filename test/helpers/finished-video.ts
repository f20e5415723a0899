/** Polls `GET /v1/videos/{id}` every 100 ms until the task is completed or failed; each answer is checked against the contract. */
import type { Express } from 'express';
import request from 'supertest';
import { assertMatchesSchema } from './spec-schemas.js';

export async function finishedVideo(
  app: Express,
  key: string,
  id: string,
  options: { polls?: number; onPoll?: (video: Record<string, unknown>) => void } = {},
): Promise<Record<string, unknown>> {
  for (let i = 0; i < (options.polls ?? 300); i += 1) {
    const res = await request(app).get(`/v1/videos/${id}`).set('authorization', `Bearer ${key}`);
    assertMatchesSchema('Video', res.body);
    options.onPoll?.(res.body);
    if (res.body.status === 'completed' || res.body.status === 'failed') {
      return res.body;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the task did not finish');
}
