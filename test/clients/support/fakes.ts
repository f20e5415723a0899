/**
 * Scripted upstreams on 127.0.0.1 (port 0), one per dialect, that behave enough like a model for real
 * clients to finish a tool loop through the gateway:
 *
 * - given a tool result (Anthropic `tool_result` block / OpenAI `role: "tool"` message) as the last turn,
 *   they answer text that quotes it: `<Fake> got the tool result: <output>`;
 * - when tools are offered and the last user text says `call <tool> {json}`, they call that tool;
 * - otherwise they echo: `<Fake> says: <last user text>`.
 *
 * A model name containing `think` makes them reason first (Anthropic `thinking` + `signature_delta`,
 * OpenAI `reasoning_content`) and report cache tokens, so reasoning and cache accounting can be checked
 * through every dialect. Both answer JSON or SSE as asked and stream in small pieces; each is the one fake
 * upstream of `test/fakes` (which records every request) with this scripted handler.
 */
import type { ServerResponse } from 'node:http';
import { sendJson as sendJsonText, sseHead, writePieces } from '../../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../../fakes/fake-upstream.js';

/** What a fake's reasoning says, so tests can check it never shows up as assistant text. */
export const FAKE_REASONING = 'Fake reasoning: the user wants an answer, so I will give one.';
/** The signature the Anthropic fake puts on its thinking blocks. */
export const FAKE_SIGNATURE = 'RmFrZVNpZ25hdHVyZUZvclRlc3Rz';
/** Cache token counts the thinking models report. */
export const FAKE_CACHE = { read: 1800, write: 2048 };

type Step = { kind: 'text'; text: string } | { kind: 'tool'; name: string; input: Record<string, unknown> };

const CALL = /\bcall\s+([A-Za-z0-9_.:-]+)(?:\s+(\{[\s\S]*\}))?/i;

function decide(label: string, lastUserText: string, toolResult: string | undefined, toolNames: string[]): Step {
  if (toolResult !== undefined) {
    return { kind: 'text', text: `${label} got the tool result: ${toolResult}` };
  }
  const match = CALL.exec(lastUserText);
  if (match && toolNames.includes(match[1])) {
    let input: Record<string, unknown> = {};
    try {
      input = match[2] ? (JSON.parse(match[2]) as Record<string, unknown>) : {};
    } catch {
      input = {};
    }
    return { kind: 'tool', name: match[1], input };
  }
  return { kind: 'text', text: `${label} says: ${lastUserText}` };
}

/** Splits text into small pieces, so a stream carries several deltas. */
function pieces(text: string, size = 12): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) {
    out.push(text.slice(at, at + size));
  }
  return out.length > 0 ? out : [''];
}

/** Every frame in its own write, so clients read a stream that arrives in pieces. */
async function writeSse(res: ServerResponse, frames: string[]): Promise<void> {
  sseHead(res);
  await writePieces(res, frames);
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------------------------
// Anthropic Messages

interface AnthropicBlock {
  type: string;
  text?: string;
  content?: string | AnthropicBlock[];
}

function anthropicText(content: unknown): string {
  if (typeof content === 'string') {
    return content;
  }
  if (Array.isArray(content)) {
    return (content as AnthropicBlock[]).map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('');
  }
  return '';
}

/** The last user turn's text (its last text block: Claude Code puts `<system-reminder>` blocks first). */
function lastAnthropicTurn(messages: Array<{ role: string; content: unknown }>): { text: string; toolResult?: string } {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  if (!last) {
    return { text: '' };
  }
  if (Array.isArray(last.content)) {
    const blocks = last.content as AnthropicBlock[];
    const results = blocks.filter((block) => block.type === 'tool_result');
    if (results.length > 0) {
      return { text: '', toolResult: results.map((block) => anthropicText(block.content)).join('\n') };
    }
    const texts = blocks.filter((block) => block.type === 'text').map((block) => block.text ?? '');
    const command = texts.find((text) => CALL.test(text));
    return { text: (command ?? texts[texts.length - 1] ?? '').trim() };
  }
  return { text: anthropicText(last.content).trim() };
}

export function startAnthropicFake(): Promise<FakeUpstream> {
  return startFakeUpstream(async (request, res) => {
    if (!request.url.startsWith('/v1/messages')) {
      sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${request.url}` } });
      return;
    }
    const body = request.body as {
      model: string;
      stream?: boolean;
      messages: Array<{ role: string; content: unknown }>;
      tools?: Array<{ name: string }>;
    };
    const think = body.model.includes('think');
    const turn = lastAnthropicTurn(body.messages);
    const step = decide(
      'Anthropic fake',
      turn.text,
      turn.toolResult,
      (body.tools ?? []).map((tool) => tool.name),
    );
    const id = `msg_fake_${request.url.length}${Date.now().toString(36)}`;
    const usage = {
      input_tokens: 25,
      output_tokens: 17,
      cache_read_input_tokens: think ? FAKE_CACHE.read : 0,
      cache_creation_input_tokens: think ? FAKE_CACHE.write : 0,
    };
    const signature = FAKE_SIGNATURE;
    const finalBlock =
      step.kind === 'text'
        ? { type: 'text', text: step.text }
        : { type: 'tool_use', id: `toolu_fake_${Date.now().toString(36)}`, name: step.name, input: step.input };
    const stopReason = step.kind === 'text' ? 'end_turn' : 'tool_use';

    if (!body.stream) {
      const content = [...(think ? [{ type: 'thinking', thinking: FAKE_REASONING, signature }] : []), finalBlock];
      sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      });
      return;
    }
    const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const frames = [
      event('message_start', {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      }),
    ];
    let index = 0;
    if (think) {
      frames.push(
        event('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        }),
      );
      for (const piece of pieces(FAKE_REASONING)) {
        frames.push(
          event('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'thinking_delta', thinking: piece },
          }),
        );
      }
      frames.push(
        event('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'signature_delta', signature },
        }),
      );
      frames.push(event('content_block_stop', { type: 'content_block_stop', index }));
      index += 1;
    }
    frames.push('event: ping\ndata: {"type": "ping"}\n\n');
    if (finalBlock.type === 'text') {
      frames.push(
        event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
      );
      for (const piece of pieces(finalBlock.text ?? '')) {
        frames.push(
          event('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: piece },
          }),
        );
      }
    } else {
      frames.push(
        event('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { ...finalBlock, input: {} },
        }),
      );
      for (const piece of pieces(JSON.stringify(finalBlock.input), 9)) {
        frames.push(
          event('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: piece },
          }),
        );
      }
    }
    frames.push(event('content_block_stop', { type: 'content_block_stop', index }));
    frames.push(
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      }),
    );
    frames.push(event('message_stop', { type: 'message_stop' }));
    await writeSse(res, frames);
  });
}

// ---------------------------------------------------------------------------------------------------------
// OpenAI chat completions

interface ChatMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
}

function chatText(content: ChatMessage['content']): string {
  if (typeof content === 'string') {
    return content;
  }
  return (content ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

export function startOpenAIFake(): Promise<FakeUpstream> {
  return startFakeUpstream(async (request, res) => {
    if (!request.url.endsWith('/chat/completions')) {
      sendJson(res, 404, { error: { message: `no route ${request.url}`, type: 'invalid_request_error' } });
      return;
    }
    const body = request.body as {
      model: string;
      stream?: boolean;
      stream_options?: { include_usage?: boolean };
      messages: ChatMessage[];
      tools?: Array<{ function: { name: string } }>;
    };
    const think = body.model.includes('think');
    const turns = body.messages.filter((message) => message.role !== 'system' && message.role !== 'developer');
    const last = turns[turns.length - 1];
    const lastUser = [...turns].reverse().find((message) => message.role === 'user');
    const step = decide(
      'OpenAI fake',
      chatText(lastUser?.content).trim(),
      last?.role === 'tool' ? chatText(last.content) : undefined,
      (body.tools ?? []).map((tool) => tool.function.name),
    );
    const id = `chatcmpl-fake${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = {
      prompt_tokens: 2100,
      completion_tokens: 30,
      total_tokens: 2130,
      prompt_tokens_details: { cached_tokens: think ? FAKE_CACHE.read : 0 },
      completion_tokens_details: { reasoning_tokens: think ? 12 : 0 },
    };
    const toolCall =
      step.kind === 'tool'
        ? {
            id: `call_fake_${Date.now().toString(36)}`,
            type: 'function',
            function: { name: step.name, arguments: JSON.stringify(step.input) },
          }
        : undefined;
    const finishReason = toolCall ? 'tool_calls' : 'stop';

    if (!body.stream) {
      const message = {
        role: 'assistant',
        content: step.kind === 'text' ? step.text : null,
        ...(think ? { reasoning_content: FAKE_REASONING } : {}),
        ...(toolCall ? { tool_calls: [toolCall] } : {}),
      };
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
        usage,
      });
      return;
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra })}\n\n`;
    const frames = [chunk({ role: 'assistant', content: '' })];
    if (think) {
      for (const piece of pieces(FAKE_REASONING)) {
        frames.push(chunk({ reasoning_content: piece }));
      }
    }
    if (toolCall) {
      frames.push(
        chunk({
          tool_calls: [
            { index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } },
          ],
        }),
      );
      for (const piece of pieces(toolCall.function.arguments, 9)) {
        frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
      }
    } else if (step.kind === 'text') {
      for (const piece of pieces(step.text)) {
        frames.push(chunk({ content: piece }));
      }
    }
    frames.push(chunk({}, finishReason));
    if (body.stream_options?.include_usage) {
      frames.push(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`,
      );
    }
    frames.push('data: [DONE]\n\n');
    await writeSse(res, frames);
  });
}
