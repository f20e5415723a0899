/**
 * The OpenAI-compatible provider: any upstream that serves OpenAI's `/chat/completions` (OpenAI, vLLM,
 * llama.cpp, Ollama, LM Studio, OpenRouter, DeepSeek, …), configured by base URL, key and headers.
 * One connection pool per provider, shared by all its models.
 */
import type { ChatModel } from '../../core/chat.js';
import type { Provider } from '../../core/models.js';
import { createOpenAICompatibleChatModel } from './chat.js';
import type { ProviderLogger } from '../provider-logger.js';
import { createOpenAICompatibleHttpClient, type OpenAICompatibleConfig } from './http-client.js';

export interface OpenAICompatibleProvider extends Provider {
  chatModel(upstreamModelId: string): ChatModel;
  close(): Promise<void>;
}

export function createOpenAICompatibleProvider(config: OpenAICompatibleConfig, deps: { logger?: ProviderLogger } = {}): OpenAICompatibleProvider {
  const client = createOpenAICompatibleHttpClient(config);
  // Not cached: routes pass caller-chosen model names through, and a model object is cheap to build.
  const chatModel = (upstreamModelId: string): ChatModel =>
      createOpenAICompatibleChatModel({ config, client, modelId: upstreamModelId, logger: deps.logger });
  return { id: config.id, chatModel, models: { chat: chatModel }, close: () => client.close() };
}
