/**
 * The `ChatModel` of an Anthropic upstream: canonical options are encoded with the Anthropic Messages codec's
 * upstream direction, sent to `<base>/v1/messages`, and the answer (JSON or SSE) decoded back. Token counts come
 * from the upstream's `count_tokens` endpoint, so they are exact. Native passthrough forwards an Anthropic
 * caller's body untouched, with the caller's query (`beta=true`) and `anthropic-beta` header.
 */
import { decodeMessage } from '../../formats/anthropic-messages/decode-response.js';
import { decodeMessagesStream } from '../../formats/anthropic-messages/decode-stream.js';
import { encodeCountTokensRequest, encodeMessagesRequest } from '../../formats/anthropic-messages/encode-request.js';
import type { AnthropicUpstreamMessage } from '../../formats/anthropic-messages/wire-types.js';
import { UpstreamError } from '../../core/api-error.js';
import type { ChatCallOptions, ChatModel, ChatResult, ChatStreamPart } from '../../core/chat.js';
import type { CallContext } from '../../core/call-context.js';
import { forwardBody } from '../upstream/forward-body.js';
import { resultAsParts } from '../../core/result-as-parts.js';
import type { ProviderLogger } from '../provider-logger.js';
import { readJsonBody } from '../upstream/read-body.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import type { AnthropicConfig } from './http-client.js';
import { readSseEvents } from './read-sse-events.js';

export const MESSAGES_PATH = '/v1/messages';
export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

export interface AnthropicChatModelInput {
  config: AnthropicConfig;
  client: UpstreamHttpClient;
  modelId: string;
  logger?: ProviderLogger;
}

function asMessage(json: unknown, provider: string): AnthropicUpstreamMessage {
  if (!json || typeof json !== 'object' || !Array.isArray((json as AnthropicUpstreamMessage).content)) {
    throw new UpstreamError(provider, 502, null, `Upstream ${provider} answered with something other than a message`);
  }
  return json as AnthropicUpstreamMessage;
}

export function createAnthropicChatModel(input: AnthropicChatModelInput): ChatModel {
  const { config, client, modelId, logger } = input;

  async function* stream(options: ChatCallOptions, context: CallContext): AsyncGenerator<ChatStreamPart> {
    const body = encodeMessagesRequest(options, modelId, { stream: true, warn: context.warn });
    // Awaited before the first part: a non-2xx answer is thrown before anything was yielded.
    const response = await client.post({
      path: MESSAGES_PATH,
      body,
      signal: context.signal,
      accept: 'text/event-stream',
    });
    if ((response.headers['content-type'] ?? '').includes('application/json')) {
      logger?.warn(
        { provider: config.id, model: modelId, requestId: context.requestId },
        'upstream answered a streamed call with JSON',
      );
      const json = await readJsonBody(config.id, response, 'answered a streamed call with invalid JSON');
      yield* resultAsParts(decodeMessage(asMessage(json, config.id)));
      return;
    }
    for await (const part of decodeMessagesStream(readSseEvents(response.body, config.id), { provider: config.id })) {
      if (part.type === 'finish') {
        response.markComplete();
      }
      yield part;
    }
  }

  return {
    provider: config.id,
    modelId,
    async generate(options: ChatCallOptions, context: CallContext): Promise<ChatResult> {
      const body = encodeMessagesRequest(options, modelId, { stream: false, warn: context.warn });
      const json = await client.postJson({ path: MESSAGES_PATH, body, signal: context.signal });
      return decodeMessage(asMessage(json, config.id));
    },
    stream,
    async countTokens(options: ChatCallOptions, context: CallContext): Promise<number> {
      const body = encodeCountTokensRequest(options, modelId, context.warn);
      const json = await client.postJson({ path: COUNT_TOKENS_PATH, body, signal: context.signal });
      const count = (json as { input_tokens?: unknown } | null)?.input_tokens;
      if (typeof count !== 'number' || !Number.isFinite(count)) {
        throw new UpstreamError(
          config.id,
          502,
          null,
          `Upstream ${config.id} answered count_tokens without input_tokens`,
        );
      }
      return count;
    },
    passthrough: {
      'anthropic-messages': {
        forward: (body, context) => forwardBody(client, MESSAGES_PATH, body, context),
        forwardCountTokens: (body, context) => forwardBody(client, COUNT_TOKENS_PATH, body, context),
      },
    },
  };
}
