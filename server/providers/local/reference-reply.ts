/**
 * What the built-in reference chat model answers: a pure function of the conversation, so every client
 * (and every test) gets the same output for the same input. It is not a language model.
 *
 * - After tool results: it reports them (`Tool get_weather returned: {"temp":21}`).
 * - When tools are offered and the last user message says `call <tool> {json args}`, it calls that tool.
 * - `tool_choice: required` or a named tool forces a call (arguments from the message, else `{}`).
 * - Otherwise it echoes the last user message (`You said: …`), noting attached images.
 * - With a JSON response format it wraps the reply as `{"reply": "…"}`.
 *
 * It reads at most the first MAX_ECHO_CHARS chars of a message or tool result: its reply stays small whatever
 * the caller sends (a 25 MiB prompt would otherwise come back as millions of streamed tokens).
 */
import type { ChatCallOptions, ChatMessage, ToolCallPart } from '../../core/chat.js';

export const MAX_ECHO_CHARS = 8192;

export type ReferenceReply =
  | { kind: 'text'; text: string; reasoning?: string }
  | { kind: 'tool-call'; name: string; arguments: string; reasoning?: string };

function textOf(message: ChatMessage): string {
  return message.content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')
    .trim()
    .slice(0, MAX_ECHO_CHARS);
}

function findToolName(messages: ChatMessage[], toolCallId: string): string {
  for (const message of messages) {
    if (message.role === 'assistant') {
      const call = message.content.find((part): part is ToolCallPart => part.type === 'tool-call' && part.id === toolCallId);
      if (call) {
        return call.name;
      }
    }
  }
  return 'unknown';
}

/** `call get_weather {"city":"Paris"}` → name and the JSON object text, when the name is an offered tool. */
function parseCallCommand(text: string, toolNames: string[]): { name: string; arguments: string } | undefined {
  const match = /\bcall\s+([A-Za-z0-9_.:-]+)(?:\s+(\{[\s\S]*\}))?/i.exec(text);
  if (!match || !toolNames.includes(match[1])) {
    return undefined;
  }
  return { name: match[1], arguments: normaliseArguments(match[2]) };
}

function normaliseArguments(raw: string | undefined): string {
  if (!raw) {
    return '{}';
  }
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? JSON.stringify(parsed) : '{}';
  } catch {
    return '{}';
  }
}

function firstJsonObject(text: string): string | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  return start >= 0 && end > start ? text.slice(start, end + 1) : undefined;
}

export function referenceReply(options: ChatCallOptions): ReferenceReply {
  const messages = options.messages;
  const last = messages[messages.length - 1];
  const reasoning = options.reasoning ? 'The reference model reads the last message and answers deterministically.' : undefined;

  if (last?.role === 'tool') {
    const reports = last.content.map((result) => {
      const output = result.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('').slice(0, MAX_ECHO_CHARS);
      return `Tool ${findToolName(messages, result.toolCallId)} returned: ${output}`;
    });
    return wrap({ kind: 'text', text: reports.join('\n'), reasoning }, options);
  }

  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const userText = lastUser ? textOf(lastUser) : '';
  const tools = options.tools ?? [];
  const choice = options.toolChoice ?? { type: 'auto' };
  if (tools.length > 0 && choice.type !== 'none') {
    const names = choice.type === 'tool' ? [choice.name] : tools.map((tool) => tool.name);
    const command = parseCallCommand(userText, names);
    if (command) {
      return { kind: 'tool-call', ...command, reasoning };
    }
    if (choice.type === 'required' || choice.type === 'tool') {
      return { kind: 'tool-call', name: names[0], arguments: normaliseArguments(firstJsonObject(userText)), reasoning };
    }
  }

  const images = lastUser ? lastUser.content.filter((part) => part.type === 'image').length : 0;
  const imageNote = images > 0 ? ` (with ${images} image${images === 1 ? '' : 's'})` : '';
  const text = userText || images > 0 ? `You said: ${userText}${imageNote}` : 'Hello! I am the Omnigate reference model.';
  return wrap({ kind: 'text', text, reasoning }, options);
}

function wrap(reply: ReferenceReply, options: ChatCallOptions): ReferenceReply {
  const format = options.responseFormat?.type;
  if (reply.kind === 'text' && (format === 'json' || format === 'json-schema')) {
    return { ...reply, text: JSON.stringify({ reply: reply.text }) };
  }
  return reply;
}
