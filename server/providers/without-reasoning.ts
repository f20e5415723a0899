/**
 * A chat model configured with `reasoning: false`: reasoning settings that a caller's dialect asked for
 * (Claude Code always sends `output_config.effort`, which becomes `reasoning_effort` upstream) are dropped with
 * the usual warning, because models that do not reason (gpt-4o, most local models) refuse the call otherwise.
 * Native passthrough is untouched: there the caller speaks the upstream's own dialect and owns its fields.
 */
import type { ChatCallOptions, ChatModel } from '../core/chat.js';
import type { CallContext } from '../core/call-context.js';

function stripReasoning(options: ChatCallOptions, context: CallContext): ChatCallOptions {
  if (!options.reasoning) {
    return options;
  }
  context.warn({ field: 'reasoning', reason: 'the model is configured with reasoning: false' });
  const { reasoning: _dropped, ...rest } = options;
  return rest;
}

export function withoutReasoning(model: ChatModel): ChatModel {
  return {
    provider: model.provider,
    modelId: model.modelId,
    passthrough: model.passthrough,
    writeFromSources: model.writeFromSources,
    generate: (options, context) => model.generate(stripReasoning(options, context), context),
    stream: (options, context) => model.stream(stripReasoning(options, context), context),
    countTokens: (options, context) => model.countTokens(options, context),
  };
}
