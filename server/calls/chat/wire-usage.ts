/**
 * Reads token usage out of a dialect's own wire traffic, for native passthrough: the bytes go to the
 * caller untouched, and the usage record bills from what we parsed here. Each reader takes a whole JSON
 * answer or the SSE events of a stream; `usage()` is the last total the upstream reported. Upstreams that
 * report none (older llama.cpp, LM Studio) still get a record: `produced()` collects the generated text
 * (bounded: beyond what is counted exactly only its length is kept), which the caller counts with the
 * tokenizer, as the translated path does.
 */
import {
  mergeAnthropicUsage,
  usageFromCounters,
  type AnthropicUsageCounters,
} from '../../formats/anthropic-messages/map-usage.js';
import type { AnthropicUpstreamUsage } from '../../formats/anthropic-messages/wire-types.js';
import { decodeUsage } from '../../formats/openai-chat/map-usage.js';
import type { UpstreamUsage } from '../../formats/openai-chat/wire-types.js';
import type { Dialect, Usage } from '../../core/chat.js';
import { BoundedText } from '../../tokens/bounded-text.js';
import { jsonText } from '../../tokens/json-text.js';

export interface WireUsageReader {
  json(body: unknown): void;
  event(data: unknown): void;
  usage(): Usage | undefined;
  /** Text, reasoning and tool arguments the upstream generated, for an estimate when it reported no usage. */
  produced(): BoundedText;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null;
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function text(...values: unknown[]): string {
  return values.filter((value): value is string => typeof value === 'string').join('');
}

/** Generated text of a chat completion (`message`) or chunk (`delta`). */
function chatProduced(body: Json): string {
  return list(body.choices)
    .map((choice) => {
      const message = isObject(choice.message) ? choice.message : isObject(choice.delta) ? choice.delta : {};
      const calls = list(message.tool_calls).map((call) =>
        isObject(call.function) ? text(call.function.name, call.function.arguments) : '',
      );
      return text(message.content, message.reasoning_content, message.reasoning) + calls.join('');
    })
    .join('');
}

function chatReader(): WireUsageReader {
  let last: Usage | undefined;
  const produced = new BoundedText();
  const take = (value: unknown) => {
    if (!isObject(value)) {
      return;
    }
    produced.append(chatProduced(value));
    if (isObject(value.usage)) {
      last = decodeUsage(value.usage as UpstreamUsage) ?? last;
    }
  };
  return { json: take, event: take, usage: () => last, produced: () => produced };
}

function anthropicReader(): WireUsageReader {
  let counters: AnthropicUsageCounters | undefined;
  const produced = new BoundedText();
  const merge = (usage: unknown) => {
    if (isObject(usage)) {
      counters = mergeAnthropicUsage(counters ?? { input: 0, output: 0 }, usage as AnthropicUpstreamUsage);
    }
  };
  return {
    json(body) {
      if (isObject(body)) {
        merge(body.usage);
        produced.append(
          list(body.content)
            .map((block) => text(block.text, block.thinking) + (isObject(block.input) ? jsonText(block.input) : ''))
            .join(''),
        );
      }
    },
    event(data) {
      if (!isObject(data)) {
        return;
      }
      if (data.type === 'content_block_delta' && isObject(data.delta)) {
        produced.append(text(data.delta.text, data.delta.thinking, data.delta.partial_json));
      } else if (data.type === 'message_start' && isObject(data.message)) {
        merge(data.message.usage);
      } else if (data.type === 'message_delta') {
        merge(data.usage);
      }
    },
    usage: () => (counters ? usageFromCounters(counters) : undefined),
    produced: () => produced,
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

/** Generated text of a Responses output list. */
function responsesProduced(output: unknown): string {
  return list(output)
    .map(
      (item) =>
        text(item.arguments) +
        list(item.content)
          .map((part) => text(part.text))
          .join('') +
        list(item.summary)
          .map((part) => text(part.text))
          .join(''),
    )
    .join('');
}

/** The Responses events that carry generated text. */
const RESPONSES_DELTA_EVENTS = new Set([
  'response.output_text.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
]);

function responsesReader(): WireUsageReader {
  let last: Usage | undefined;
  const produced = new BoundedText();
  return {
    json: (body) => {
      if (isObject(body)) {
        last = responsesUsage(body.usage) ?? last;
        produced.append(responsesProduced(body.output));
      }
    },
    event(data) {
      if (isObject(data) && typeof data.type === 'string' && RESPONSES_DELTA_EVENTS.has(data.type)) {
        produced.append(text(data.delta));
      }
      // response.completed, .incomplete and .failed carry the whole response object with its usage.
      if (
        isObject(data) &&
        typeof data.type === 'string' &&
        data.type.startsWith('response.') &&
        isObject(data.response)
      ) {
        last = responsesUsage(data.response.usage) ?? last;
      }
    },
    usage: () => last,
    produced: () => produced,
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
