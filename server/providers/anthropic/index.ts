/**
 * The Anthropic provider: the Anthropic API (or a gateway that speaks it), configured by base URL, key,
 * `anthropic_version` and headers. One connection pool per provider, shared by all its models. Besides chat
 * models it forwards native `count_tokens` calls, so Anthropic callers get exact counts.
 */
import type { ChatModel, NativePassthrough, PassthroughResponse } from '../types.js';
import { COUNT_TOKENS_PATH, createAnthropicChatModel, forwardBody, type ProviderLogger } from './chat.js';
import { createAnthropicHttpClient, type AnthropicConfig } from './http-client.js';

export interface AnthropicProviderDeps {
  logger?: ProviderLogger;
}

export interface AnthropicProvider {
  id: string;
  chatModel(upstreamModelId: string): ChatModel;
  /**
   * Native `POST /v1/messages/count_tokens` passthrough: the caller's body (with `model` already rewritten) is
   * sent untouched, with the caller's query and `anthropic-beta`; non-2xx answers throw `UpstreamError`.
   */
  forwardCountTokens(body: Record<string, unknown>, context: Parameters<NativePassthrough['forward']>[1]): Promise<PassthroughResponse>;
  close(): Promise<void>;
}

export function createAnthropicProvider(config: AnthropicConfig, deps: AnthropicProviderDeps = {}): AnthropicProvider {
  const client = createAnthropicHttpClient(config);
  return {
    id: config.id,
    // Not cached: routes pass caller-chosen model names through, and a model object is cheap to build.
    chatModel: (upstreamModelId: string): ChatModel => createAnthropicChatModel({ config, client, modelId: upstreamModelId, logger: deps.logger }),
    forwardCountTokens: (body, context) => forwardBody(client, COUNT_TOKENS_PATH, body, context),
    close: () => client.close(),
  };
}
