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
import type { ResponseStore } from '../storage/response-store.js';

function notFound(id: string): ApiError {
  return new ApiError(404, `No stored response ${quoteValue(id)} for this API key.`, {
    code: 'response_not_found',
    param: 'response_id',
  });
}

/**
 * The stored output items the request's `item_reference`s name, read before decoding (the decoder does no I/O).
 * Only top-level items can be references; an item is one when its type says so, or when it has an id and
 * neither a type nor a role (the decoder's own reading).
 */
async function referencedItems(
  responses: ResponseStore,
  input: ResponsesRequestBody['input'],
  keyId: string,
): Promise<Map<string, unknown>> {
  const ids = new Set<string>();
  for (const item of Array.isArray(input) ? (input as unknown[]) : []) {
    if (typeof item !== 'object' || item === null) {
      continue;
    }
    const { type, role, id } = item as { type?: unknown; role?: unknown; id?: unknown };
    const reference = type === 'item_reference' || (type === undefined && role === undefined && id !== undefined);
    if (reference && typeof id === 'string') {
      ids.add(id);
    }
  }
  const found = new Map<string, unknown>();
  for (const id of ids) {
    const item = await responses.getItem(id, keyId);
    if (item !== undefined) {
      found.set(id, item);
    }
  }
  return found;
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
          const previous = previousId ? await deps.responses.get(previousId, key.id) : undefined;
          const referenced = await referencedItems(deps.responses, body.input, key.id);
          if (previousId && !previous) {
            throw new ApiError(404, `No stored response ${quoteValue(previousId)} for this API key.`, {
              code: 'response_not_found',
              param: 'previous_response_id',
            });
          }
          const decoded = decodeResponsesRequest(
            body,
            { history: previous?.conversation ?? [], resolveItem: (id) => referenced.get(id) },
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
          const store = async (response: ResponseObject) => {
            if (decoded.store) {
              await deps.responses.save({
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
            await sendGenerated(res, chat, decoded.options, async (result) => {
              const response = encodeResponse(result, meta);
              // Kept before the answer goes out: its id may be the very next request's previous_response_id.
              await store(response);
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
            await store(final.response);
          }
        },
      );
    },
    async getResponse(req, res) {
      const stored = await deps.responses.get(req.params.response_id, scopeOf(res).key.id);
      if (!stored) {
        throw notFound(req.params.response_id);
      }
      res.json(stored.response as never);
    },
    async deleteResponse(req, res) {
      if (!(await deps.responses.delete(req.params.response_id, scopeOf(res).key.id))) {
        throw notFound(req.params.response_id);
      }
      res.json({ id: req.params.response_id, object: 'response.deleted', deleted: true });
    },
  };
}
