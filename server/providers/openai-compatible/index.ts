/**
 * The OpenAI-compatible provider: any upstream that serves OpenAI's `/chat/completions` (OpenAI, vLLM,
 * llama.cpp, Ollama, LM Studio, OpenRouter, DeepSeek, …), configured by base URL, key and headers, and its
 * `/images/generations`, `/audio/speech`, `/audio/transcriptions`, `/audio/translations`, `/videos`, `/embeddings` and the Cohere/Jina `/rerank`; music only when the provider's `music` setting says how.
 * One connection pool per provider, shared by all its models, and one guarded fetcher for the URLs its
 * answers hold.
 */
import type { ChatModel } from '../../core/chat.js';
import type { ModelFactories, Provider } from '../../core/models.js';
import { createOpenAICompatibleChatModel } from './chat.js';
import type { ProviderLogger } from '../provider-logger.js';
import { createSafeFetcher } from '../upstream/safe-fetch.js';
import { createOpenAICompatibleHttpClient, type OpenAICompatibleConfig } from './http-client.js';
import { createOpenAICompatibleEmbeddingModel, createOpenAICompatibleRerankModel } from './embeddings.js';
import { createOpenAICompatibleImageModel } from './images.js';
import { createOpenAICompatibleMusicModel } from './music.js';
import { createOpenAICompatibleSpeechModel } from './speech.js';
import { createOpenAICompatibleTranscriptionModel } from './transcriptions.js';
import { createOpenAICompatibleVideoModel, type VideoPolling } from './videos.js';

export interface OpenAICompatibleProvider extends Provider {
  chatModel(upstreamModelId: string): ChatModel;
  close(): Promise<void>;
}

export function createOpenAICompatibleProvider(
  config: OpenAICompatibleConfig,
  deps: { logger?: ProviderLogger; videoPolling?: Partial<VideoPolling> } = {},
): OpenAICompatibleProvider {
  const client = createOpenAICompatibleHttpClient(config);
  const fetcher = createSafeFetcher({ provider: config.id, baseUrl: config.base_url, timeoutMs: config.timeout_ms });
  // Not cached: routes pass caller-chosen model names through, and a model object is cheap to build.
  const chatModel = (upstreamModelId: string): ChatModel =>
    createOpenAICompatibleChatModel({ config, client, modelId: upstreamModelId, logger: deps.logger });
  const { music } = config;
  const models: ModelFactories = {
    chat: chatModel,
    image: (modelId) => createOpenAICompatibleImageModel({ config, client, fetcher, modelId }),
    speech: (modelId) => createOpenAICompatibleSpeechModel({ config, client, modelId }),
    transcription: (modelId) => createOpenAICompatibleTranscriptionModel({ config, client, modelId }),
    video: (modelId) => createOpenAICompatibleVideoModel({ config, client, modelId, polling: deps.videoPolling }),
    embedding: (modelId) => createOpenAICompatibleEmbeddingModel({ config, client, modelId }),
    rerank: (modelId) => createOpenAICompatibleRerankModel({ config, client, modelId }),
    ...(music
      ? { music: (modelId: string) => createOpenAICompatibleMusicModel({ config, music, client, fetcher, modelId }) }
      : {}),
  };
  return {
    id: config.id,
    chatModel,
    models,
    close: async () => {
      await Promise.all([client.close(), fetcher.close()]);
    },
  };
}
