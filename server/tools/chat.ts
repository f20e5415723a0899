/**
 * `chat`: asks a configured chat model one question through the canonical chat core (`ChatModel.generate`,
 * the same model object every chat route calls), so any upstream or the built-in `local:chat` answers it.
 */
import { z } from 'zod';
import type { ChatMessage } from '../core/chat.js';
import { prepareCall } from '../calls/prepare-call.js';
import { defineTool } from './tool-definition.js';

const DEFAULT_CHAT_MODEL = 'local:chat';

export const chatTool = defineTool({
  name: 'chat',
  title: 'Ask a model',
  description:
    "Ask one of the gateway's configured chat models a question and get its answer (a second opinion, or a cheaper or larger model than your own). Without `model`, the built-in reference model answers.",
  input: z.object({
    prompt: z.string().min(1).max(100_000).describe('The question or instruction.'),
    model: z.string().min(1).max(256).optional().describe('A chat model id or alias of GET /v1/models.'),
    system: z.string().max(100_000).optional().describe('A system prompt.'),
    max_tokens: z.number().int().min(1).max(100_000).optional(),
    temperature: z.number().min(0).max(2).optional(),
  }),
  output: z.object({
    model: z.string(),
    content: z.string(),
    finish_reason: z.enum(['stop', 'length', 'tool-calls', 'content-filter', 'error', 'other']),
    usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async run(input, { deps, scope }) {
    const call = prepareCall(deps, scope, input.model ?? DEFAULT_CHAT_MODEL, 'chat');
    const messages: ChatMessage[] = [
      ...(input.system ? [{ role: 'system' as const, content: [{ type: 'text' as const, text: input.system }] }] : []),
      { role: 'user', content: [{ type: 'text', text: input.prompt }] },
    ];
    const result = await call.model.generate(
      { messages, maxOutputTokens: input.max_tokens, temperature: input.temperature },
      call.context,
    );
    call.call.usage = result.usage;
    const content = result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    return {
      output: {
        model: call.resolved.entry.id,
        content,
        finish_reason: result.finishReason,
        usage: { input_tokens: result.usage.inputTokens, output_tokens: result.usage.outputTokens },
      },
      text: content,
    };
  },
});
