/**
 * The Anthropic provider: the Anthropic API (or a gateway that speaks it), configured by base URL, key,
 * `anthropic_version` and headers. One connection pool per provider, shared by all its models. Besides chat
 * models it forwards native `count_tokens` calls, so Anthropic callers get exact counts.
 */
import type { ChatModel } from '../../core/chat.js';
import type { Provider } from '../../core/models.js';
import { createAnthropicChatModel } from './chat.js';
import type { ProviderLogger } from '../provider-logger.js';
import { createAnthropicHttpClient, type AnthropicConfig } from './http-client.js';

export interface AnthropicProviderDeps {
  logger?: ProviderLogger;
}

export interface AnthropicProvider extends Provider {
  chatModel(upstreamModelId: string): ChatModel;
  close(): Promise<void>;
}

export function createAnthropicProvider(config: AnthropicConfig, deps: AnthropicProviderDeps = {}): AnthropicProvider {
  const client = createAnthropicHttpClient(config);
  // Not cached: routes pass caller-chosen model names through, and a model object is cheap to build.
  const chatModel = (upstreamModelId: string): ChatModel =>
    createAnthropicChatModel({ config, client, modelId: upstreamModelId, logger: deps.logger });
  return { id: config.id, chatModel, models: { chat: chatModel }, close: () => client.close() };
}
