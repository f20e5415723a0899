/**
 * Builds the model registry from configuration: the built-in local models plus every configured upstream
 * provider and model.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { agentRoutes } from './agent-routes.js';
import { createAnthropicProvider } from './anthropic/index.js';
import { createLocalChatModel, LOCAL_CHAT_MODEL_ID } from './local/chat.js';
import { createOpenAICompatibleProvider } from './openai-compatible/index.js';
import { createModelRegistry, type ChatProvider, type ModelEntry, type ModelRegistry } from './registry.js';

/** The built-in models, always present. */
export function builtInModels(): ModelEntry[] {
  return [{ id: LOCAL_CHAT_MODEL_ID, type: 'chat', provider: 'local', upstreamModel: 'chat', aliases: ['local-chat', 'reference'], created: 1767225600 }];
}

export function localChatProvider(): ChatProvider {
  const model = createLocalChatModel();
  return { id: 'local', chatModel: () => model };
}

export function buildRegistry(
  config: Pick<Config, 'providers' | 'models' | 'aliases' | 'routes'> & Partial<Pick<Config, 'defaultChatModel' | 'agentRoutes'>>,
  logger?: Logger,
): ModelRegistry {
  const providers: ChatProvider[] = [localChatProvider()];
  for (const provider of config.providers) {
    providers.push(provider.type === 'anthropic' ? createAnthropicProvider(provider, { logger }) : createOpenAICompatibleProvider(provider, { logger }));
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
    })),
  ];
  const routes = [
    ...config.routes,
    ...agentRoutes({ providers: config.providers, defaultChatModel: config.defaultChatModel, agentRoutes: config.agentRoutes ?? true }),
  ];
  return createModelRegistry({ models, aliases: config.aliases, routes, chatProviders: providers });
}
