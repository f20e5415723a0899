/**
 * `POST /v1/responses`, `GET` and `DELETE /v1/responses/{response_id}`: the OpenAI Responses dialect on the
 * canonical core. Stored responses (store defaults to true) keep the canonical conversation so that
 * `previous_response_id` and `item_reference` continue it; they belong to the key that made them.
 */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import {
  conversationAfterTurn,
  decodeResponsesRequest,
  encodeResponse,
  encodeResponsesStream,
  encodePassthroughStreamFailure,
  encodeStreamFailure,
  type ResponseObject,
  type ResponsesRequestBody,
  type ResponsesStream,
} from '../formats/openai-responses/index.js';
import { ApiError } from '../core/api-error.js';
import { randomId } from '../core/random-id.js';
import type { Handlers } from '../http/operation-types.js';
import { answerCheck } from '../calls/chat/answer-contract.js';
import { estimateInputTokens } from '../calls/chat/forward-native.js';
import { forwardOrTranslate } from '../calls/chat/forward-or-translate.js';
import { prepareCall } from '../calls/prepare-call.js';
import { sendGenerated, sendStreamed } from '../calls/chat/run-chat-call.js';
import { quoteValue } from '../core/quote-value.js';

function notFound(id: string): ApiError {
  return new ApiError(404, `No stored response ${quoteValue(id)} for this API key.`, {
    code: 'response_not_found',
    param: 'response_id',
  });
}

export function responseHandlers(
  deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'responses' | 'spec'>,
): Pick<Handlers, 'createResponse' | 'getResponse' | 'deleteResponse'> {
  const now = deps.now ?? Date.now;
  const checkAnswer = answerCheck(deps.spec.document, 'openai-responses');
  return {
    async createResponse(req, res) {
      const key = scopeOf(res).key;
      const chat = prepareCall(deps, scopeOf(res), req.body.model, 'chat');
      const body = req.body as unknown as ResponsesRequestBody;
      await forwardOrTranslate(
        res,
        chat,
        'openai-responses',
        // The upstream keeps its own state: previous_response_id and item_reference name its ids, not ours.
        () => ({
          body: req.body as unknown as Record<string, unknown>,
          failure: encodePassthroughStreamFailure,
          // The upstream holds the earlier turns of a chain, so only this request's own input is counted.
          estimateInputTokens: () =>
            estimateInputTokens(
              () => decodeResponsesRequest(body, { history: [], resolveItem: () => undefined }, () => {}).options,
            ),
          checkAnswer,
        }),
        async () => {
          const previousId = req.body.previous_response_id ?? undefined;
          const previous = previousId ? deps.responses.get(previousId, key.id) : undefined;
          if (previousId && !previous) {
            throw new ApiError(404, `No stored response ${quoteValue(previousId)} for this API key.`, {
              code: 'response_not_found',
              param: 'previous_response_id',
            });
          }
          const decoded = decodeResponsesRequest(
            body,
            { history: previous?.conversation ?? [], resolveItem: (id) => deps.responses.getItem(id, key.id) },
            chat.context.warn,
          );
          const createdAt = Math.floor(now() / 1000);
          const meta = {
            id: randomId('resp'),
            model: chat.resolved.entry.id,
            createdAt,
            generateId: randomId,
            ...decoded.echo,
          };
          const store = (response: ResponseObject) => {
            if (decoded.store) {
              deps.responses.save({
                id: response.id,
                keyId: key.id,
                createdAt,
                response,
                conversation: conversationAfterTurn(previous?.conversation ?? [], decoded.inputMessages, response),
                inputItems: decoded.inputItems,
              });
            }
          };
          if (!decoded.stream) {
            await sendGenerated(res, chat, decoded.options, (result) => {
              const response = encodeResponse(result, meta);
              store(response);
              return response;
            });
            return;
          }
          let encoder: ResponsesStream | undefined;
          await sendStreamed(res, chat, decoded.options, {
            encode: (parts) => (encoder = encodeResponsesStream(parts, meta)),
            failure: (error) => (encoder ? encodeStreamFailure(error, encoder.state) : []),
          });
          const final = encoder?.final();
          if (final) {
            store(final.response);
          }
        },
      );
    },
    getResponse(req, res) {
      const stored = deps.responses.get(req.params.response_id, scopeOf(res).key.id);
      if (!stored) {
        throw notFound(req.params.response_id);
      }
      res.json(stored.response as never);
    },
    deleteResponse(req, res) {
      if (!deps.responses.delete(req.params.response_id, scopeOf(res).key.id)) {
        throw notFound(req.params.response_id);
      }
      res.json({ id: req.params.response_id, object: 'response.deleted', deleted: true });
    },
  };
}
