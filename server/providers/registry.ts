/**
 * Resolves what callers put in `model` to a configured model: exact ids, stable aliases, `provider:model`
 * for any configured upstream, and glob routing rules (`claude-*` → a provider or a model). Unknown names
 * are a 404 whose message says how to list models; a model of the wrong type is a 400; a key limited to
 * some models gets a 403 for the others.
 */
import { ApiError } from '../core/api-error.js';
import { ConfigError, type RouteConfig } from '../config.js';
import type { ModelByType, ModelType, Provider } from '../core/models.js';
import type { ApiKeyRecord } from '../storage/key-store.js';
import type { ChatModel } from '../core/chat.js';
import { withoutReasoning } from './without-reasoning.js';
import { quoteValue } from '../core/quote-value.js';
import { createMemoryBreakers, type CircuitBreakers, type CircuitState } from './resilience/circuit-breaker.js';
import { deployedModel } from './resilience/deployed-model.js';
import type { ResiliencePlan, ResilienceRuntime, Strategy, Target } from './resilience/resilience-plan.js';
import { createDeploymentStats } from './resilience/select-deployments.js';
import type { ProviderLogger } from './provider-logger.js';

/** A model's deployments and how its calls are retried (config `deployments`, `retries`, `fallbacks`, …). */
export interface ModelResilience {
  deployments: Array<{ id: string; provider: string; model: string; weight: number }>;
  strategy: Strategy;
  retries: number;
  fallbacks: string[];
  contextWindowFallbacks: string[];
  /** The call's budget for all attempts; undefined: none of the layer's own. */
  budgetMs: number | undefined;
  backoffMs: number;
  maxBackoffMs: number;
}

/** One deployment's circuit, as `GET /health/ready` shows it. */
export interface DeploymentState {
  model: string;
  deployment: string;
  state: CircuitState;
  failures: number;
}

export interface ModelEntry {
  /** Public id, e.g. `local:chat` or `openai:gpt-4o-mini`. */
  id: string;
  type: ModelType;
  provider: string;
  /** The upstream's own name for it. */
  upstreamModel: string;
  aliases: string[];
  created: number;
  /** False when the model takes no reasoning settings (config `reasoning: false`); absent means it does. */
  reasoning?: boolean;
  /** Set when calls go through the retry layer (providers/resilience/). */
  resilience?: ModelResilience;
}

export interface ResolvedModel {
  entry: ModelEntry;
  requested: string;
  /** Set when a stand-in route answered the name with another model (agent-routes.ts): the pattern it matched. */
  standInFor?: string;
}

export interface ModelRegistry {
  resolve(requested: string, type: ModelType, key?: ApiKeyRecord): ResolvedModel;
  /** The model behind a resolved entry, as the interface of its capability. */
  model<T extends ModelType>(resolved: ResolvedModel, type: T): ModelByType[T];
  /** The configured models, only those `key` may use when it is limited to some. */
  list(key?: ApiKeyRecord): ModelEntry[];
  /** A configured model by id or alias, when `key` may use it; routed names are no models of their own. */
  find(name: string, key?: ApiKeyRecord): ModelEntry | undefined;
  /** The routing rules, only those `key` may use when it is limited to some. */
  routes(key?: ApiKeyRecord): Array<{ pattern: string; target: string }>;
  /** The circuit of every deployment of the models with deployments. */
  deploymentStates(): Promise<DeploymentState[]>;
  close(): Promise<void>;
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}

export function createModelRegistry(input: {
  models: ModelEntry[];
  aliases?: Record<string, string>;
  routes?: Array<RouteConfig & { standIn?: boolean }>;
  providers: Provider[];
  /** Each deployment's circuit (in this process unless shared through Redis); made in memory when absent. */
  breakers?: CircuitBreakers;
  logger?: ProviderLogger;
}): ModelRegistry {
  const byId = new Map<string, ModelEntry>();
  const byAlias = new Map<string, ModelEntry>();
  for (const model of input.models) {
    if (byId.has(model.id)) {
      throw new ConfigError(`models: the id '${model.id}' is configured twice`);
    }
    byId.set(model.id, model);
  }
  const addAlias = (alias: string, model: ModelEntry) => {
    const taken = byAlias.get(alias) ?? byId.get(alias);
    if (taken && taken !== model) {
      throw new ConfigError(`aliases: '${alias}' names both '${taken.id}' and '${model.id}'`);
    }
    byAlias.set(alias, model);
  };
  for (const model of input.models) {
    model.aliases.forEach((alias) => addAlias(alias, model));
  }
  for (const [alias, target] of Object.entries(input.aliases ?? {})) {
    const model = byId.get(target) ?? byAlias.get(target);
    if (!model) {
      throw new ConfigError(`aliases.${alias}: unknown model '${target}' (configured: ${[...byId.keys()].join(', ')})`);
    }
    if (!model.aliases.includes(alias)) {
      model.aliases.push(alias);
    }
    addAlias(alias, model);
  }
  const providers = new Map(input.providers.map((provider) => [provider.id, provider]));
  const routes = (input.routes ?? []).map((route) => {
    if (route.model !== undefined && !byId.has(route.model) && !byAlias.has(route.model)) {
      throw new ConfigError(
        `routes: '${route.pattern}' points at unknown model '${route.model}' (configured: ${[...byId.keys()].join(', ')})`,
      );
    }
    if (route.provider !== undefined && !providers.has(route.provider)) {
      throw new ConfigError(`routes: '${route.pattern}' points at unknown provider '${route.provider}'`);
    }
    return { route, pattern: globToRegExp(route.pattern) };
  });
  const models = new Map<string, ModelByType[ModelType]>();
  const runtime: ResilienceRuntime | undefined = input.models.some((model) => model.resilience)
    ? {
        breakers: input.breakers ?? createMemoryBreakers({ failureThreshold: 5, cooldownMs: 30_000 }),
        stats: createDeploymentStats(),
        logger: input.logger,
      }
    : undefined;

  /** The provider's own model of `type` (no retry layer). */
  function providerModel<T extends ModelType>(
    entryId: string,
    providerId: string,
    upstreamModel: string,
    type: T,
    reasoning?: boolean,
  ): ModelByType[T] {
    const factory = providers.get(providerId)?.models[type];
    if (!factory) {
      throw new ApiError(500, `Provider '${providerId}' serves no ${type} model '${entryId}'.`);
    }
    let model = factory(upstreamModel);
    if ((type === 'chat' || type === 'vision') && reasoning === false) {
      model = withoutReasoning(model as ChatModel) as ModelByType[T];
    }
    return model;
  }

  /** Where an entry's calls may go: its deployments, each its provider's model made once. */
  function targetsOf<T extends ModelType>(entry: ModelEntry, type: T): Array<Target<ModelByType[T]>> {
    const deployments = entry.resilience?.deployments ?? [
      {
        id: `${entry.provider}:${entry.upstreamModel}`,
        provider: entry.provider,
        model: entry.upstreamModel,
        weight: 1,
      },
    ];
    return deployments.map((deployment) => {
      let made: ModelByType[T] | undefined;
      return {
        id: deployment.id,
        provider: deployment.provider,
        weight: deployment.weight,
        upstreamModel: deployment.model,
        model: () => {
          made ??= providerModel(entry.id, deployment.provider, deployment.model, type, entry.reasoning);
          return made;
        },
      };
    });
  }

  /** Fallback names resolve on first use, to the named model's deployments (without its own retry layer). */
  function fallbackTargets<T extends ModelType>(
    names: string[],
    type: T,
    of: string,
  ): () => Array<Target<ModelByType[T]>> {
    let resolved: Array<Target<ModelByType[T]>> | undefined;
    return () => {
      resolved ??= names.flatMap((name) => {
        const found = lookup(name, type);
        if (!found || found.entry.type !== type || !providers.get(found.entry.provider)?.models[type]) {
          input.logger?.warn(
            { model: of, fallback: name },
            `fallback '${name}' of '${of}' is no ${type} model; skipped`,
          );
          return [];
        }
        return targetsOf(found.entry, type);
      });
      return resolved;
    };
  }

  function resilientModel<T extends ModelType>(
    entry: ModelEntry,
    resilience: ModelResilience,
    type: T,
  ): ModelByType[T] {
    const plan: ResiliencePlan<ModelByType[T]> = {
      modelId: entry.id,
      deployments: targetsOf(entry, type),
      strategy: resilience.strategy,
      retries: resilience.retries,
      fallbacks: fallbackTargets(resilience.fallbacks, type, entry.id),
      contextWindowFallbacks: fallbackTargets(resilience.contextWindowFallbacks, type, entry.id),
      budgetMs: resilience.budgetMs,
      backoffMs: resilience.backoffMs,
      maxBackoffMs: resilience.maxBackoffMs,
    };
    return deployedModel(type, plan, runtime!);
  }

  /**
   * A model named through its provider (`openai:dall-e-3`) or a route is of the type the operation asks for
   * when the provider offers that capability, so an upstream's image or speech models need no configuration.
   */
  function dynamicEntry(providerId: string, upstreamModel: string, wanted: ModelType): ModelEntry {
    const type = providers.get(providerId)?.models[wanted] ? wanted : 'chat';
    return { id: `${providerId}:${upstreamModel}`, type, provider: providerId, upstreamModel, aliases: [], created: 0 };
  }

  function lookup(requested: string, wanted: ModelType): { entry: ModelEntry; standInFor?: string } | undefined {
    const direct = byId.get(requested) ?? byAlias.get(requested);
    if (direct) {
      return { entry: direct };
    }
    const colon = requested.indexOf(':');
    if (colon > 0 && providers.has(requested.slice(0, colon)) && requested.length > colon + 1) {
      return { entry: dynamicEntry(requested.slice(0, colon), requested.slice(colon + 1), wanted) };
    }
    for (const { route, pattern } of routes) {
      if (pattern.test(requested)) {
        if (route.provider) {
          return { entry: dynamicEntry(route.provider, requested, wanted) };
        }
        const entry = byId.get(route.model!) ?? byAlias.get(route.model!);
        return entry && { entry, standInFor: route.standIn ? route.pattern : undefined };
      }
    }
    return undefined;
  }

  /** Whether a limited key names this model, by its id or an alias (as `resolve` checks it). */
  function visible(entry: ModelEntry, key: ApiKeyRecord | undefined): boolean {
    return (
      !key ||
      key.allowedModels.length === 0 ||
      [entry.id, ...entry.aliases].some((name) => key.allowedModels.includes(name))
    );
  }

  /** A route a limited key can use: to a model it sees, or to a provider for one of its own model names. */
  function usableRoute({ route, pattern }: (typeof routes)[number], key: ApiKeyRecord | undefined): boolean {
    if (!key || key.allowedModels.length === 0) {
      return true;
    }
    if (route.model !== undefined) {
      const target = byId.get(route.model) ?? byAlias.get(route.model);
      return target !== undefined && visible(target, key);
    }
    return key.allowedModels.some((name) => pattern.test(name));
  }

  return {
    resolve(requested, type, key) {
      const found = lookup(requested, type);
      const entry = found?.entry;
      if (!entry) {
        throw new ApiError(
          404,
          `The model ${quoteValue(requested)} does not exist. List the available models with GET /v1/models.`,
          {
            code: 'model_not_found',
            param: 'model',
          },
        );
      }
      if (entry.type !== type) {
        throw new ApiError(
          400,
          `The model ${quoteValue(requested)} is of type ${entry.type}; this operation needs a model of type ${type}.`,
          {
            code: 'wrong_model_type',
            param: 'model',
          },
        );
      }
      if (key && key.allowedModels.length > 0) {
        const names = [entry.id, requested, ...entry.aliases];
        if (!names.some((name) => key.allowedModels.includes(name))) {
          throw new ApiError(403, `This API key may not use the model ${quoteValue(requested)}.`, {
            code: 'model_not_allowed',
            param: 'model',
          });
        }
      }
      return found.standInFor === undefined ? { entry, requested } : { entry, requested, standInFor: found.standInFor };
    },
    model<T extends ModelType>({ entry }: ResolvedModel, type: T): ModelByType[T] {
      const cached = models.get(entry.id);
      if (cached) {
        return cached as ModelByType[T];
      }
      if (entry.type !== type) {
        throw new ApiError(500, `Provider '${entry.provider}' serves no ${type} model '${entry.id}'.`);
      }
      const model =
        entry.resilience && runtime
          ? resilientModel(entry, entry.resilience, type)
          : providerModel(entry.id, entry.provider, entry.upstreamModel, type, entry.reasoning);
      // Only configured models are cached: names reaching a provider through a route are caller-chosen,
      // and caching them would let callers grow this map without bound.
      if (byId.get(entry.id) === entry) {
        models.set(entry.id, model);
      }
      return model;
    },
    list(key) {
      return [...byId.values()].filter((entry) => visible(entry, key));
    },
    find(name, key) {
      const entry = byId.get(name) ?? byAlias.get(name);
      return entry && visible(entry, key) ? entry : undefined;
    },
    routes(key) {
      return routes
        .filter((route) => usableRoute(route, key))
        .map(({ route }) => ({
          pattern: route.pattern,
          target: route.provider ? `${route.provider}:*` : route.model!,
        }));
    },
    async deploymentStates() {
      if (!runtime) {
        return [];
      }
      const rows: Array<Promise<DeploymentState>> = [];
      for (const entry of byId.values()) {
        for (const deployment of entry.resilience?.deployments ?? []) {
          rows.push(
            runtime.breakers
              .state(deployment.id)
              .then((circuit) => ({ model: entry.id, deployment: deployment.id, ...circuit })),
          );
        }
      }
      return Promise.all(rows);
    },
    async close() {
      await Promise.all([...input.providers.map((provider) => provider.close?.()), input.breakers?.close()]);
    },
  };
}
