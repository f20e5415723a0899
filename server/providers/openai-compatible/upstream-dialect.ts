/**
 * Which request fields an OpenAI-compatible upstream takes, decided from its base URL: OpenAI's own API
 * (and Azure OpenAI) needs `max_completion_tokens` for its reasoning models and rejects `top_k`; local
 * servers (Ollama, LM Studio, llama.cpp) know only `max_tokens` and take `top_k`.
 * https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens
 */
import type { ChatRequestDialect } from '../../formats/openai-chat/encode-request.js';

export function upstreamDialect(baseUrl: string): ChatRequestDialect {
  const host = new URL(baseUrl).hostname.toLowerCase();
  const isOpenAI = host === 'api.openai.com' || host.endsWith('.openai.azure.com');
  return isOpenAI
    ? { maxTokensField: 'max_completion_tokens', topK: false }
    : { maxTokensField: 'max_tokens', topK: true };
}
