/**
 * Reads token usage out of a dialect's own wire traffic, for native passthrough: the bytes go to the
 * caller untouched, and the usage record bills from what we parsed here, never from a number we made up.
 * Each reader takes a whole JSON answer or the SSE events of a stream; `usage()` is the last known total.
 */
import { mergeAnthropicUsage, usageFromCounters, type AnthropicUsageCounters } from '../formats/anthropic-messages/map-usage.js';
import type { AnthropicUpstreamUsage } from '../formats/anthropic-messages/wire-types.js';
import { decodeUsage } from '../formats/openai-chat/map-usage.js';
import type { UpstreamUsage } from '../formats/openai-chat/wire-types.js';
import type { Dialect, Usage } from '../providers/types.js';

export interface WireUsageReader {
  json(body: unknown): void;
  event(data: unknown): void;
  usage(): Usage | undefined;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null;
}

function chatReader(): WireUsageReader {
  let last: Usage | undefined;
  const take = (value: unknown) => {
    if (isObject(value) && isObject(value.usage)) {
      last = decodeUsage(value.usage as UpstreamUsage) ?? last;
    }
  };
  return { json: take, event: take, usage: () => last };
}

function anthropicReader(): WireUsageReader {
  let counters: AnthropicUsageCounters | undefined;
  const merge = (usage: unknown) => {
    if (isObject(usage)) {
      counters = mergeAnthropicUsage(counters ?? { input: 0, output: 0 }, usage as AnthropicUpstreamUsage);
    }
  };
  return {
    json: (body) => merge(isObject(body) ? body.usage : undefined),
    event(data) {
      if (!isObject(data)) {
        return;
      }
      if (data.type === 'message_start' && isObject(data.message)) {
        merge(data.message.usage);
      } else if (data.type === 'message_delta') {
        merge(data.usage);
      }
    },
    usage: () => (counters ? usageFromCounters(counters) : undefined),
  };
}

function responsesUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage) || typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number') {
    return undefined;
  }
  const result: Usage = { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens };
  const cached = isObject(usage.input_tokens_details) ? usage.input_tokens_details.cached_tokens : undefined;
  const reasoning = isObject(usage.output_tokens_details) ? usage.output_tokens_details.reasoning_tokens : undefined;
  if (typeof cached === 'number') {
    result.cacheReadTokens = cached;
  }
  if (typeof reasoning === 'number') {
    result.reasoningTokens = reasoning;
  }
  return result;
}

function responsesReader(): WireUsageReader {
  let last: Usage | undefined;
  return {
    json: (body) => {
      last = isObject(body) ? (responsesUsage(body.usage) ?? last) : last;
    },
    event(data) {
      // response.completed, .incomplete and .failed carry the whole response object with its usage.
      if (isObject(data) && typeof data.type === 'string' && data.type.startsWith('response.') && isObject(data.response)) {
        last = responsesUsage(data.response.usage) ?? last;
      }
    },
    usage: () => last,
  };
}

export function wireUsageReader(dialect: Dialect): WireUsageReader {
  switch (dialect) {
    case 'openai-chat':
      return chatReader();
    case 'anthropic-messages':
      return anthropicReader();
    case 'openai-responses':
      return responsesReader();
  }
}
