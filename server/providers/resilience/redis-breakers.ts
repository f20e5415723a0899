/**
 * The circuits of all instances in one Redis (`OMNIGATE_REDIS_URL`): a hash per deployment under `prefix`
 * (`f` failures, `u` open until, `p` probe claimed until), changed only by Lua scripts so two instances never
 * both take the probe. Times are the instances' clocks (ms), which a fleet keeps close. Redis being away must
 * not stop traffic: a command that fails lets the call through (and says so in the log once a minute).
 */
import { createRequire } from 'node:module';
import type { ProviderLogger } from '../provider-logger.js';
import { ALLOWED, DENIED, type BreakerSettings, type CircuitBreakers, type CircuitState } from './circuit-breaker.js';

const ACQUIRE = `
local v = redis.call('HMGET', KEYS[1], 'f', 'u', 'p')
if not v[1] then return {1, 0, 0} end
local f = tonumber(v[1]); local u = tonumber(v[2] or '0'); local p = tonumber(v[3] or '0')
local now = tonumber(ARGV[1])
if u == 0 then return {1, 0, f} end
if u > now or p > now then return {0, 0, f} end
redis.call('HSET', KEYS[1], 'p', now + tonumber(ARGV[2]))
return {1, 1, f}`;

const FAILURE = `
local f = redis.call('HINCRBY', KEYS[1], 'f', 1)
local u = tonumber(redis.call('HGET', KEYS[1], 'u') or '0')
local now = tonumber(ARGV[1])
if ARGV[4] == '1' or (f >= tonumber(ARGV[2]) and u <= now) then
  u = now + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'u', u, 'p', 0)
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
if u > now then return 'open' elseif u == 0 then return 'closed' else return 'half-open' end`;

export interface RedisBreakerOptions extends BreakerSettings {
  url: string;
  /** Key prefix, e.g. `omnigate:`; tests use one of their own. */
  prefix: string;
  logger?: ProviderLogger;
  now?: () => number;
}

export function createRedisBreakers(options: RedisBreakerOptions): CircuitBreakers {
  const now = options.now ?? Date.now;
  // One retry and a 1 s command timeout: a call never waits long on a Redis that is away.
  // Loaded only when Redis is configured: a gateway without it never holds the client library.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const redis = new Redis(options.url, { enableOfflineQueue: true, maxRetriesPerRequest: 1, commandTimeout: 1_000 });
  redis.on('error', () => undefined);
  const key = (id: string) => `${options.prefix}circuit:${id}`;
  // A probe that never reports (its instance died) frees its turn after this long.
  const probeHoldMs = Math.max(options.cooldownMs, 120_000);
  // Failures older than this are forgotten with their key.
  const ttlMs = Math.max(options.cooldownMs * 4, 600_000);
  let lastComplaint = 0;
  const complain = (error: unknown) => {
    if (now() - lastComplaint > 60_000) {
      lastComplaint = now();
      options.logger?.warn({ err: error }, 'circuit breaker state in Redis unavailable; calls go through unguarded');
    }
  };
  return {
    async acquire(id) {
      try {
        const [allowed, probe, failures] = (await redis.eval(ACQUIRE, 1, key(id), now(), probeHoldMs)) as number[];
        if (!allowed) {
          return DENIED;
        }
        return probe === 0 && failures === 0 ? ALLOWED : { allowed: true, probe: probe === 1, failures: failures ?? 0 };
      } catch (error) {
        complain(error);
        return ALLOWED;
      }
    },
    async success(id, permit) {
      if (!permit.probe && permit.failures === 0) {
        return;
      }
      await redis.del(key(id)).catch(complain);
    },
    async failure(id, permit) {
      try {
        return (await redis.eval(
          FAILURE,
          1,
          key(id),
          now(),
          options.failureThreshold,
          options.cooldownMs,
          permit.probe ? '1' : '0',
          ttlMs,
        )) as CircuitState;
      } catch (error) {
        complain(error);
        return 'closed';
      }
    },
    async release(id, permit) {
      if (permit.probe) {
        await redis.hset(key(id), 'p', 0).catch(complain);
      }
    },
    async state(id) {
      try {
        const [f, u] = await redis.hmget(key(id), 'f', 'u');
        const until = Number(u ?? 0);
        const state: CircuitState = until === 0 ? 'closed' : until > now() ? 'open' : 'half-open';
        return { state, failures: Number(f ?? 0) };
      } catch (error) {
        complain(error);
        return { state: 'closed', failures: 0 };
      }
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
