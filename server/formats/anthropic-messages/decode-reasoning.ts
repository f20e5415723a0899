/**
 * Anthropic Messages `thinking` and `output_config` → canonical `reasoning` (budget, adaptive, effort) and
 * `responseFormat` (`output_config.format` json_schema); other `output_config` keys are dropped with a warning.
 */
import type { ChatCallOptions } from '../../core/chat.js';
import { hasValue, type Warn } from './decode-warnings.js';
import type { AnthropicMessagesRequest } from './wire-types.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function decodeReasoning(body: AnthropicMessagesRequest, warn: Warn): ChatCallOptions['reasoning'] {
  let reasoning: ChatCallOptions['reasoning'];
  const thinking = body.thinking;
  if (thinking) {
    if (thinking.type === 'enabled' && typeof thinking.budget_tokens === 'number') {
      reasoning = { budgetTokens: thinking.budget_tokens };
    } else if (thinking.type === 'adaptive') {
      reasoning = {};
    } else if (thinking.type !== 'disabled') {
      warn('thinking.type', `thinking type '${thinking.type}' is not supported; the model's default applies`);
    }
  }
  const effort = body.output_config?.effort;
  if (typeof effort === 'string') {
    if (thinking?.type === 'disabled') {
      warn('output_config.effort', 'effort is carried as reasoning effort, and thinking is disabled; it was dropped');
    } else {
      reasoning = { ...reasoning, effort };
    }
  }
  return reasoning;
}

export function decodeOutputConfig(body: AnthropicMessagesRequest, options: ChatCallOptions, warn: Warn): void {
  const config = body.output_config;
  if (!config) {
    return;
  }
  for (const [key, value] of Object.entries(config)) {
    if (key === 'effort' || !hasValue(value)) {
      continue;
    }
    // The contract leaves `format` open (`{type: "json_schema", schema}` is Anthropic's shape), so `schema` is
    // checked at run time.
    const format = config.format;
    if (key === 'format' && format && format.type === 'json_schema' && isRecord(format.schema)) {
      options.responseFormat = { type: 'json-schema', name: 'output', schema: format.schema };
      continue;
    }
    warn(`output_config.${key}`, `output_config.${key} is not supported; it was dropped`);
  }
}
