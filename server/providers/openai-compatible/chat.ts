/**
 * The `ChatModel` of an OpenAI-compatible upstream: canonical options are encoded with the chat codec's
 * upstream direction, sent to `<base>/chat/completions`, and the answer (JSON or SSE) decoded back.
 * Native passthrough forwards chat-completions bodies (and Responses bodies when the upstream serves
 * `/responses` itself, `responses: native`) untouched.
 */
import { decodeChatCompletion } from '../../formats/openai-chat/decode-response.js';
import { decodeChatStream } from '../../formats/openai-chat/decode-stream.js';
import { encodeChatRequest } from '../../formats/openai-chat/encode-request.js';
import type { UpstreamChatCompletion } from '../../formats/openai-chat/wire-types.js';
import { UpstreamError } from '../../core/api-error.js';
import { countCallInputTokens } from '../../tokens/tokenizer.js';
import type {
  ChatCallOptions,
  ChatModel,
  ChatResult,
  ChatStreamPart,
  Dialect,
  NativePassthrough,
} from '../../core/chat.js';
import type { CallContext } from '../../core/call-context.js';
import { forwardBody } from '../upstream/forward-body.js';
import { resultAsParts } from '../../core/result-as-parts.js';
import type { ProviderLogger } from '../provider-logger.js';
import { readJsonBody } from '../upstream/read-body.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { readSseJson } from './read-sse-json.js';
import { upstreamDialect } from './upstream-dialect.js';

export interface OpenAICompatibleChatModelInput {
  config: OpenAICompatibleConfig;
  client: UpstreamHttpClient;
  modelId: string;
  logger?: ProviderLogger;
}

function passthrough(client: UpstreamHttpClient, path: string): NativePassthrough {
  return { forward: (body, context) => forwardBody(client, path, body, context) };
}

export function createOpenAICompatibleChatModel(input: OpenAICompatibleChatModelInput): ChatModel {
  const { config, client, modelId, logger } = input;
  const dialect = upstreamDialect(config.base_url);

  function decodeContext(options: ChatCallOptions, context: CallContext) {
    return {
      provider: config.id,
      estimateInputTokens: () => {
        logger?.warn(
          { provider: config.id, model: modelId, requestId: context.requestId },
          'upstream reported no usage; estimating tokens',
        );
        return countCallInputTokens(options);
      },
    };
  }

  async function* stream(options: ChatCallOptions, context: CallContext): AsyncGenerator<ChatStreamPart> {
    const body = encodeChatRequest(options, modelId, { stream: true, dialect, warn: context.warn });
    // Awaited before the first part: a non-2xx answer is thrown before anything was yielded.
    const response = await client.post({
      path: '/chat/completions',
      body,
      signal: context.signal,
      accept: 'text/event-stream',
    });
    const contentType = response.headers['content-type'] ?? '';
    if (contentType.includes('application/json')) {
      // Some servers answer a streamed request that failed validation with a 200 JSON error body.
      const parsed = (await readJsonBody(
        config.id,
        response,
        'answered a streamed call with invalid JSON',
      )) as UpstreamChatCompletion;
      const result = await decodeChatCompletion(parsed, decodeContext(options, context));
      yield* resultAsParts(result);
      return;
    }
    const chunks = readSseJson(response.body, config.id) as AsyncIterable<UpstreamChatCompletion>;
    yield* decodeChatStream(chunks, decodeContext(options, context));
  }

  const model: ChatModel = {
    provider: config.id,
    modelId,
    async generate(options: ChatCallOptions, context: CallContext): Promise<ChatResult> {
      const body = encodeChatRequest(options, modelId, { stream: false, dialect, warn: context.warn });
      const json = await client.postJson({ path: '/chat/completions', body, signal: context.signal });
      if (!json || typeof json !== 'object') {
        throw new UpstreamError(
          config.id,
          502,
          null,
          `Upstream ${config.id} answered with something other than a completion`,
        );
      }
      return decodeChatCompletion(json as UpstreamChatCompletion, decodeContext(options, context));
    },
    stream,
    async countTokens(options: ChatCallOptions): Promise<number> {
      // OpenAI-compatible servers have no counting endpoint: an o200k_base estimate.
      return countCallInputTokens(options);
    },
    passthrough: {
      'openai-chat': passthrough(client, '/chat/completions'),
      ...(config.responses === 'native' ? { 'openai-responses': passthrough(client, '/responses') } : {}),
    } satisfies Partial<Record<Dialect, NativePassthrough>>,
  };
  return model;
}
