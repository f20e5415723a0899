/**
 * The dependency checks behind `GET /health/ready` (observability/readiness.ts runs them): the database, Redis
 * when `OMNIGATE_REDIS_URL` is set, and the upstreams of the default chat model. A model with several
 * deployments is one check that fails only when none of its deployments' upstreams can be reached: one
 * deployment down is what the retry layer is for (its circuit shows in the answer's `deployments`), not a
 * reason to take the instance out of the load balancer.
 */
import type { Config } from './config.js';
import { createRedisProbe } from './observability/redis-probe.js';
import type { ReadinessCheck } from './observability/readiness.js';
import type { ModelRegistry } from './providers/registry.js';
import { tcpProblem } from './providers/upstream/reachable.js';

export interface ReadinessChecks {
  checks: ReadinessCheck[];
  /** Closes what the checks hold open (the Redis probe's connection). */
  close(): Promise<void>;
}

export function readinessChecks(
  config: Readonly<Config>,
  registry: ModelRegistry,
  database: () => Promise<string | null>,
): ReadinessChecks {
  const checks: ReadinessCheck[] = [{ name: 'database', run: database }];
  const redis = config.redisUrl ? createRedisProbe(config.redisUrl) : undefined;
  if (redis) {
    checks.push({ name: 'redis', run: () => redis.problem() });
  }
  const chat = defaultChatUpstreams(config, registry);
  if (chat?.providers.length === 1) {
    const provider = chat.providers[0]!; // length 1
    checks.push({ name: `upstream:${provider.id}`, run: () => tcpProblem(provider.base_url) });
  } else if (chat && chat.providers.length > 1) {
    checks.push({
      name: `deployments:${chat.model}`,
      async run() {
        const problems = await Promise.all(chat.providers.map((provider) => tcpProblem(provider.base_url)));
        return problems.some((problem) => problem === null)
          ? null
          : `no deployment reachable: ${chat.providers.map((provider, index) => `${provider.id}: ${problems[index]}`).join('; ')}`;
      },
    });
  }
  return { checks, close: async () => redis?.close() };
}

/** The upstream providers behind the default chat model (one per distinct provider of its deployments). */
function defaultChatUpstreams(
  config: Readonly<Config>,
  registry: ModelRegistry,
): { model: string; providers: Config['providers'] } | undefined {
  let entry: ReturnType<ModelRegistry['resolve']>['entry'];
  try {
    entry = registry.resolve(config.defaultChatModel ?? 'local:chat', 'chat').entry;
  } catch {
    return undefined; // no such chat model: the registry says so to callers
  }
  const ids = new Set(entry.resilience?.deployments.map((deployment) => deployment.provider) ?? [entry.provider]);
  const providers = config.providers.filter((provider) => ids.has(provider.id));
  return providers.length > 0 ? { model: entry.id, providers } : undefined;
}
