/**
 * Builds the model registry from configuration: the built-in local models plus every configured upstream
 * provider and model.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { agentRoutes } from './agent-routes.js';
import { createAnthropicProvider } from './anthropic/index.js';
import { createLocalChatModel, LOCAL_CHAT_MODEL_ID } from './local/chat.js';
import { createLocalEmbeddingModel } from './local/embed.js';
import { createLocalImageModel } from './local/image.js';
import { createLocalMusicModel } from './local/music.js';
import type { LocalSearchIndex } from './local/search-index.js';
import { createLocalSearchModel } from './local/search.js';
import { createLocalSpeechModel } from './local/speech.js';
import { createLocalVideoModel } from './local/video.js';
import { createOpenAICompatibleProvider } from './openai-compatible/index.js';
import { createWebSearchProvider } from './web-search/index.js';
import type { Provider } from '../core/models.js';
import { createMediaPool, DEFAULT_MEDIA_SETTINGS, type MediaPool } from '../engines/media-pool.js';
import { createModelRegistry, type ModelEntry, type ModelRegistry, type ModelResilience } from './registry.js';
import type { ModelConfig, ProviderConfig } from '../config.js';
import { createMemoryBreakers, type CircuitBreakers } from './resilience/circuit-breaker.js';
import { createRedisBreakers } from './resilience/redis-breakers.js';

/** The budget of a call when its model sets none: the longest `timeout_ms` of the providers it may use. */
const LOCAL_TIMEOUT_MS = 60_000;

function resilienceOf(model: ModelConfig, providers: ProviderConfig[]): ModelResilience | undefined {
  if (!model.resilient || !model.deployments) {
    return undefined;
  }
  const timeouts = model.deployments.map(
    (deployment) => providers.find((provider) => provider.id === deployment.provider)?.timeout_ms ?? LOCAL_TIMEOUT_MS,
  );
  return {
    deployments: model.deployments.map(({ id, provider, model: upstream, weight }) => ({
      id,
      provider,
      model: upstream,
      weight,
    })),
    strategy: model.strategy ?? 'weighted',
    retries: model.retries ?? 0,
    fallbacks: model.fallbacks ?? [],
    contextWindowFallbacks: model.context_window_fallbacks ?? [],
    // A video's attempt is bounded by the task queue (OMNIGATE_VIDEO_TIMEOUT_MS) unless the model sets its own.
    budgetMs: model.timeout_ms ?? (model.type === 'video' ? undefined : Math.max(...timeouts)),
    backoffMs: model.backoff_ms ?? 100,
    maxBackoffMs: model.max_backoff_ms ?? 5_000,
  };
}

/** The circuits: in Redis when `OMNIGATE_REDIS_URL` is set (shared by all instances), else in this process. */
export function createBreakers(
  config: Partial<Pick<Config, 'circuitBreaker' | 'redisUrl'>>,
  logger?: Logger,
  prefix = 'omnigate:',
): CircuitBreakers {
  const settings = {
    failureThreshold: config.circuitBreaker?.failure_threshold ?? 5,
    cooldownMs: config.circuitBreaker?.cooldown_ms ?? 30_000,
  };
  return config.redisUrl
    ? createRedisBreakers({ ...settings, url: config.redisUrl, prefix, logger })
    : createMemoryBreakers(settings);
}

/** The built-in models, always present. */
export function builtInModels(): ModelEntry[] {
  const created = 1767225600;
  return [
    {
      id: LOCAL_CHAT_MODEL_ID,
      type: 'chat',
      provider: 'local',
      upstreamModel: 'chat',
      aliases: ['local-chat', 'reference'],
      created,
    },
    { id: 'local:image', type: 'image', provider: 'local', upstreamModel: 'image', aliases: ['local-image'], created },
    {
      id: 'local:speech',
      type: 'speech',
      provider: 'local',
      upstreamModel: 'speech',
      aliases: ['local:tts', 'local-speech'],
      created,
    },
    { id: 'local:music', type: 'music', provider: 'local', upstreamModel: 'music', aliases: ['local-music'], created },
    { id: 'local:video', type: 'video', provider: 'local', upstreamModel: 'video', aliases: ['local-video'], created },
    {
      id: 'local:search',
      type: 'search',
      provider: 'local',
      upstreamModel: 'search',
      aliases: ['local-search'],
      created,
    },
    // Lexical, not semantic: see providers/local/embed.ts.
    {
      id: 'local:embed',
      type: 'embedding',
      provider: 'local',
      upstreamModel: 'embed',
      aliases: ['local-embed'],
      created,
    },
  ];
}

/**
 * The built-in engines, offline: one model per capability, whatever name follows `local:`. The media engines
 * share one worker pool, started lazily (no thread exists until the first generation) and closed with the
 * registry. The server passes the pool in, since the built-in image analysis of `image_understanding` (a tool,
 * not a model) runs in the same pool and so within the same bound.
 */
export function localProvider(pool: MediaPool, searchIndex?: LocalSearchIndex): Provider {
  const chat = createLocalChatModel();
  const image = createLocalImageModel(pool);
  const music = createLocalMusicModel(pool);
  const speech = createLocalSpeechModel(pool);
  const video = createLocalVideoModel(pool);
  const embedding = createLocalEmbeddingModel(pool);
  const search = searchIndex ? createLocalSearchModel(searchIndex) : undefined;
  return {
    id: 'local',
    models: {
      chat: () => chat,
      image: () => image,
      music: () => music,
      speech: () => speech,
      video: () => video,
      embedding: () => embedding,
      // Only a registry built without the database (`omnigate config check`, the keys CLI) has no index; it never serves.
      ...(search ? { search: () => search } : {}),
    },
    close: () => {
      speech.close();
      return pool.close();
    },
  };
}

export function buildRegistry(
  config: Pick<Config, 'providers' | 'models' | 'aliases' | 'routes'> &
    Partial<Pick<Config, 'defaultChatModel' | 'agentRoutes' | 'media' | 'circuitBreaker' | 'redisUrl'>>,
  logger?: Logger,
  /** The local search index `local:search` reads (the caller's stored files). */
  searchIndex?: LocalSearchIndex,
  /** The media pool the local models run in (the app's own, see localProvider); made from `config.media` when absent. */
  mediaPool?: MediaPool,
  /** The deployments' circuits; made from `config` (Redis or memory) when absent and some model has deployments. */
  breakers?: CircuitBreakers,
): ModelRegistry {
  const providers: Provider[] = [
    localProvider(mediaPool ?? createMediaPool(config.media ?? DEFAULT_MEDIA_SETTINGS), searchIndex),
  ];
  for (const provider of config.providers) {
    if (provider.type === 'anthropic') {
      providers.push(createAnthropicProvider(provider, { logger }));
    } else if (provider.type === 'openai-compatible') {
      providers.push(createOpenAICompatibleProvider(provider, { logger }));
    } else {
      providers.push(createWebSearchProvider(provider));
    }
  }
  const models: ModelEntry[] = [
    ...builtInModels(),
    ...config.models.map((model) => ({
      id: model.id ?? `${model.provider}:${model.model}`,
      type: model.type,
      provider: model.provider,
      upstreamModel: model.model,
      aliases: [...model.aliases],
      created: 0,
      reasoning: model.reasoning,
      resilience: resilienceOf(model, config.providers),
    })),
  ];
  const routes = [
    ...config.routes,
    ...agentRoutes({
      providers: config.providers,
      defaultChatModel: config.defaultChatModel,
      agentRoutes: config.agentRoutes ?? true,
    }),
  ];
  const resilient = models.some((model) => model.resilience);
  return createModelRegistry({
    models,
    aliases: config.aliases,
    routes,
    providers,
    breakers: resilient ? (breakers ?? createBreakers(config, logger)) : undefined,
    logger,
  });
}
