/**
 * The OpenAI-compatible provider: any upstream that serves OpenAI's `/chat/completions` (OpenAI, vLLM,
 * llama.cpp, Ollama, LM Studio, OpenRouter, DeepSeek, …), configured by base URL, key and headers.
 * One connection pool per provider, shared by all its models.
 */
import type { ChatModel } from '../../core/chat.js';
import { createOpenAICompatibleChatModel, type ProviderLogger } from './chat.js';
import { createOpenAICompatibleHttpClient, type OpenAICompatibleConfig } from './http-client.js';

export interface OpenAICompatibleProvider {
  id: string;
  chatModel(upstreamModelId: string): ChatModel;
  close(): Promise<void>;
}

export function createOpenAICompatibleProvider(config: OpenAICompatibleConfig, deps: { logger?: ProviderLogger } = {}): OpenAICompatibleProvider {
  const client = createOpenAICompatibleHttpClient(config);
  return {
    id: config.id,
    // Not cached: routes pass caller-chosen model names through, and a model object is cheap to build.
    chatModel: (upstreamModelId: string): ChatModel =>
      createOpenAICompatibleChatModel({ config, client, modelId: upstreamModelId, logger: deps.logger }),
    close: () => client.close(),
  };
}
