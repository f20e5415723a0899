/**
 * The machine's shared Redis (127.0.0.1:6379) for tests that use it as it is (a key prefix of their own, never
 * stopped): `sharedRedisAvailable()` says whether it answers; under CI=true a Redis that does not is an error,
 * not a skip.
 */
import { Redis } from 'ioredis';

export const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';

export async function sharedRedisAvailable(): Promise<boolean> {
  const probe = new Redis(SHARED_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let reachable = false;
  try {
    await probe.connect();
    await probe.ping();
    reachable = true;
  } catch {
    reachable = false;
  } finally {
    probe.disconnect();
  }
  if (!reachable && process.env.CI === 'true') {
    throw new Error('Redis is not reachable on 127.0.0.1:6379 (CI=true: the Redis counters must be tested)');
  }
  return reachable;
}
