/**
 * `POST /anthropic/v1/messages` and `/count_tokens`: the Anthropic Messages dialect on the canonical core.
 * Named SSE events, no `[DONE]`, `error` events on failure, pings on long streams. An Anthropic upstream
 * gets the caller's body natively (query and `anthropic-beta` included); other providers get a translation.
 */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import {
  decodeMessagesRequest,
  encodeMessage,
  encodeMessagesStream,
  encodeMessagesStreamFailure,
} from '../formats/anthropic-messages/index.js';
import type { AnthropicMessagesRequest } from '../formats/anthropic-messages/wire-types.js';
import type { ApiError } from '../core/api-error.js';
import { randomId } from '../core/random-id.js';
import type { Handlers } from '../http/operation-types.js';
import { answerCheck } from '../calls/chat/answer-contract.js';
import { estimateInputTokens } from '../calls/chat/forward-native.js';
import { forwardOrTranslate } from '../calls/chat/forward-or-translate.js';
import { countAnthropicTokens } from '../calls/chat/count-tokens.js';
import { countCallInputTokens } from '../tokens/tokenizer.js';
import { prepareCall } from '../calls/prepare-call.js';
import { sendGenerated, sendStreamed } from '../calls/chat/run-chat-call.js';

function forwardedQuery(req: { originalUrl: string }): string | undefined {
  const query = req.originalUrl.indexOf('?');
  return query >= 0 ? req.originalUrl.slice(query + 1) : undefined;
}

export function messageHandlers(
  deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'spec'> & { pingIntervalMs?: number },
): Pick<Handlers, 'createMessage' | 'countMessageTokens'> {
  const checkAnswer = answerCheck(deps.spec.document, 'anthropic-messages');
  return {
    async createMessage(req, res) {
      const chat = prepareCall(deps, scopeOf(res), req.body.model, 'chat');
      const body = req.body as unknown as AnthropicMessagesRequest;
      const failure = (error: ApiError) => encodeMessagesStreamFailure(error, chat.context.requestId);
      await forwardOrTranslate(
        res,
        chat,
        'anthropic-messages',
        () => {
          const beta = req.get('anthropic-beta');
          return {
            body: req.body as unknown as Record<string, unknown>,
            query: forwardedQuery(req),
            headers: beta ? { 'anthropic-beta': beta } : undefined,
            failure,
            estimateInputTokens: () => estimateInputTokens(() => decodeMessagesRequest(body, () => {}).options),
            checkAnswer,
          };
        },
        async () => {
          const request = decodeMessagesRequest(body, chat.context.warn);
          const meta = { id: randomId('msg'), model: chat.resolved.entry.id };
          if (!request.stream) {
            await sendGenerated(res, chat, request.options, (result) => encodeMessage(result, meta));
            return;
          }
          // message_start must carry input usage before any token exists: an estimate with the BPE tokenizer,
          // counted while the upstream call starts (the encoder awaits it for message_start), not before it;
          // message_delta at the end carries the provider's own counts.
          const inputTokens = countCallInputTokens(request.options);
          await sendStreamed(res, chat, request.options, {
            encode: (parts) =>
              encodeMessagesStream(parts, { ...meta, inputTokens }, { pingIntervalMs: deps.pingIntervalMs }),
            failure,
          });
        },
      );
    },
    async countMessageTokens(req, res) {
      const chat = prepareCall(deps, scopeOf(res), req.body.model, 'chat');
      const beta = req.get('anthropic-beta');
      const inputTokens = await countAnthropicTokens(chat, req.body as unknown as Record<string, unknown>, {
        query: forwardedQuery(req),
        headers: beta ? { 'anthropic-beta': beta } : undefined,
      });
      res.json({ input_tokens: inputTokens });
    },
  };
}
