/** `POST /v1/chat/completions`: the OpenAI chat dialect on the canonical core, JSON or SSE ending in `[DONE]`. */
import type { AppDeps } from './app-deps.js';
import { errorBody } from '../http/error-handler.js';
import { randomId } from '../core/random-id.js';
import type { OperationHandler } from '../http/operation-types.js';
import { decodeChatRequest, encodeChatCompletion, encodeChatStream } from '../formats/openai-chat/index.js';
import type { ChatCompletionRequest } from '../formats/openai-chat/wire-types.js';
import { answerCheck } from '../calls/answer-contract.js';
import { estimateInputTokens, forwardNative } from '../calls/forward-native.js';
import { prepareCall } from '../calls/prepare-call.js';
import { sendGenerated, sendStreamed } from '../calls/run-chat-call.js';

export function chatCompletionHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'spec'>): {
  createChatCompletion: OperationHandler<'createChatCompletion'>;
} {
  const now = deps.now ?? Date.now;
  const checkAnswer = answerCheck(deps.spec.document, 'openai-chat');
  return {
    async createChatCompletion(req, res) {
      const chat = prepareCall(deps, res, req.body.model, 'chat');
      const native = chat.model.passthrough?.['openai-chat'];
      if (native) {
        await forwardNative(res, chat, native, {
          dialect: 'openai-chat',
          body: req.body as unknown as Record<string, unknown>,
          failure: (error) => [{ data: errorBody(error, 'openai', chat.context.requestId) }],
          estimateInputTokens: () => estimateInputTokens(() => decodeChatRequest(req.body as ChatCompletionRequest, () => {}).options),
          checkAnswer,
        });
        return;
      }
      const request = decodeChatRequest(req.body as ChatCompletionRequest, chat.context.warn);
      const meta = { id: randomId('chatcmpl', '-'), model: chat.resolved.entry.id, created: Math.floor(now() / 1000) };
      if (!request.stream) {
        await sendGenerated(res, chat, request.options, (result) => encodeChatCompletion(result, meta));
        return;
      }
      await sendStreamed(res, chat, request.options, {
        encode: (parts) => encodeChatStream(parts, { ...meta, includeUsage: request.includeUsage }).events,
        failure: (error) => [{ data: errorBody(error, 'openai', chat.context.requestId) }],
        terminator: '[DONE]',
      });
    },
  };
}
