/** `POST /v1/chat/completions`: the OpenAI chat dialect on the canonical core, JSON or SSE ending in `[DONE]`. */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import { randomId } from '../core/random-id.js';
import type { OperationHandler } from '../http/operation-types.js';
import {
  decodeChatRequest,
  encodeChatCompletion,
  encodeChatStream,
  encodeChatStreamFailure,
} from '../formats/openai-chat/index.js';
import type { ChatCompletionRequest } from '../formats/openai-chat/wire-types.js';
import { answerCheck } from '../calls/chat/answer-contract.js';
import { estimateInputTokens } from '../calls/chat/forward-native.js';
import { forwardOrTranslate } from '../calls/chat/forward-or-translate.js';
import { prepareCall } from '../calls/prepare-call.js';
import { sendGenerated, sendStreamed } from '../calls/chat/run-chat-call.js';

export function chatCompletionHandlers(
  deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'spec'>,
): {
  createChatCompletion: OperationHandler<'createChatCompletion'>;
} {
  const now = deps.now ?? Date.now;
  const checkAnswer = answerCheck(deps.spec.document, 'openai-chat');
  return {
    async createChatCompletion(req, res) {
      const chat = prepareCall(deps, scopeOf(res), req.body.model, 'chat');
      const body = req.body as ChatCompletionRequest;
      await forwardOrTranslate(
        res,
        chat,
        'openai-chat',
        () => ({
          body: req.body as unknown as Record<string, unknown>,
          failure: encodeChatStreamFailure,
          estimateInputTokens: () => estimateInputTokens(() => decodeChatRequest(body, () => {}).options),
          checkAnswer,
        }),
        async () => {
          const request = decodeChatRequest(body, chat.context.warn);
          const meta = {
            id: randomId('chatcmpl', '-'),
            model: chat.resolved.entry.id,
            created: Math.floor(now() / 1000),
          };
          if (!request.stream) {
            await sendGenerated(res, chat, request.options, (result) => encodeChatCompletion(result, meta));
            return;
          }
          await sendStreamed(res, chat, request.options, {
            encode: (parts) => encodeChatStream(parts, { ...meta, includeUsage: request.includeUsage }).events,
            failure: encodeChatStreamFailure,
            terminator: '[DONE]',
          });
        },
      );
    },
  };
}
