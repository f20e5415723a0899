/**
 * `count_tokens` of the Anthropic Messages dialect: an Anthropic upstream counts exactly, with the caller's own
 * body, query and betas; any other model counts the decoded call itself (`ChatModel.countTokens`).
 */
import { UpstreamError } from '../../core/api-error.js';
import { decodeMessagesRequest } from '../../formats/anthropic-messages/index.js';
import type { AnthropicMessagesRequest } from '../../formats/anthropic-messages/wire-types.js';
import { readJsonBody } from '../../providers/upstream/read-body.js';
import type { PreparedCall } from '../prepare-call.js';

export interface ForwardedRequest {
  /** The caller's query string, sent upstream as it came. */
  query?: string;
  headers?: Record<string, string>;
}

export async function countAnthropicTokens(
  chat: PreparedCall<'chat'>,
  body: Record<string, unknown>,
  forwarded: ForwardedRequest,
): Promise<number> {
  const native = chat.model.passthrough?.['anthropic-messages']?.forwardCountTokens;
  if (native) {
    const upstream = await native(
      { ...body, model: chat.resolved.entry.upstreamModel },
      { ...chat.context, ...forwarded },
    );
    const count = (await readJsonBody(chat.resolved.entry.provider, upstream)) as { input_tokens?: unknown } | null;
    if (typeof count?.input_tokens !== 'number') {
      throw new UpstreamError(
        chat.resolved.entry.provider,
        502,
        upstream.status,
        'The upstream count_tokens answer has no input_tokens.',
      );
    }
    return count.input_tokens;
  }
  // Same block shapes as a create request; max_tokens only satisfies the decoder's type.
  const request = decodeMessagesRequest(
    { ...(body as unknown as AnthropicMessagesRequest), max_tokens: 1 },
    chat.context.warn,
  );
  return chat.model.countTokens(request.options, chat.context);
}
