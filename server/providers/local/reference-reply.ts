/**
 * What the built-in reference chat model answers: a pure function of the conversation, so every client
 * (and every test) gets the same output for the same input. It is not a language model.
 *
 * - After tool results: it reports them (`Tool get_weather returned: {"temp":21}`).
 * - When tools are offered and the last user message says `call` and names an offered tool anywhere, it calls
 *   the first tool named, with the first JSON object anywhere in the message as arguments.
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
      const call = message.content.find(
        (part): part is ToolCallPart => part.type === 'tool-call' && part.id === toolCallId,
      );
      if (call) {
        return call.name;
      }
    }
  }
  return 'unknown';
}

/**
 * A request to call an offered tool: the message says `call` and names an offered tool anywhere (the first one
 * named is called), with the first JSON object anywhere in it as the arguments (`{}` without one):
 * `call get_weather {"city":"Paris"}` and `Please call get_weather with {"city":"Paris"}` call the same.
 */
function parseCallCommand(text: string, toolNames: string[]): { name: string; arguments: string } | undefined {
  if (!/\bcall\b/i.test(text)) {
    return undefined;
  }
  let first: { name: string; at: number } | undefined;
  for (const name of toolNames) {
    const at = indexOfWord(text, name);
    if (at >= 0 && (first === undefined || at < first.at)) {
      first = { name, at };
    }
  }
  return first ? { name: first.name, arguments: normaliseArguments(firstJsonObject(text)) } : undefined;
}

/** Where `word` first stands on its own in `text` (not inside a longer identifier), or -1. */
function indexOfWord(text: string, word: string): number {
  const isNamePart = (char: string | undefined) => char !== undefined && /[A-Za-z0-9_]/.test(char);
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    if (!isNamePart(text[at - 1]) && !isNamePart(text[at + word.length])) {
      return at;
    }
  }
  return -1;
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

/** How many brace-balanced spans are tried as JSON before giving up (the text is at most MAX_ECHO_CHARS). */
const MAX_JSON_CANDIDATES = 32;

/**
 * The first `{…}` span of `text` that is a JSON object, found in one pass over its braces: prose around it
 * (quotes, a stray brace) does not matter, since each balanced span is confirmed by JSON.parse.
 */
function firstJsonObject(text: string): string | undefined {
  const openings: number[] = [];
  const spans: Array<[number, number]> = [];
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '{') {
      openings.push(index);
    } else if (text[index] === '}' && openings.length > 0) {
      spans.push([openings.pop()!, index + 1]);
    }
  }
  spans.sort((a, b) => a[0] - b[0]);
  for (const [start, end] of spans.slice(0, MAX_JSON_CANDIDATES)) {
    const candidate = text.slice(start, end);
    try {
      const parsed: unknown = JSON.parse(candidate);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        return candidate;
      }
    } catch {
      // Not JSON (prose in braces): try the next span.
    }
  }
  return undefined;
}

export function referenceReply(options: ChatCallOptions): ReferenceReply {
  const messages = options.messages;
  const last = messages[messages.length - 1];
  const reasoning = options.reasoning
    ? 'The reference model reads the last message and answers deterministically.'
    : undefined;

  if (last?.role === 'tool') {
    const reports = last.content.map((result) => {
      const output = result.content
        .map((part) => (part.type === 'text' ? part.text : '[image]'))
        .join('')
        .slice(0, MAX_ECHO_CHARS);
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
      // names is never empty: choice names a tool, or tools has at least one.
      return {
        kind: 'tool-call',
        name: names[0]!,
        arguments: normaliseArguments(firstJsonObject(userText)),
        reasoning,
      };
    }
  }

  const images = lastUser ? lastUser.content.filter((part) => part.type === 'image').length : 0;
  const imageNote = images > 0 ? ` (with ${images} image${images === 1 ? '' : 's'})` : '';
  const text =
    userText || images > 0 ? `You said: ${userText}${imageNote}` : 'Hello! I am the Omnigate reference model.';
  return wrap({ kind: 'text', text, reasoning }, options);
}

function wrap(reply: ReferenceReply, options: ChatCallOptions): ReferenceReply {
  const format = options.responseFormat?.type;
  if (reply.kind === 'text' && (format === 'json' || format === 'json-schema')) {
    return { ...reply, text: JSON.stringify({ reply: reply.text }) };
  }
  return reply;
}
