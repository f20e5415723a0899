/**
 * Streaming calls: each sends `stream: true`, reads the `text/event-stream` answer with `parseSse` and
 * yields typed event payloads. An HTTP error before the stream starts, and an error frame after it started,
 * both surface as a thrown `OmnigateError`. Chat completions end at `data: [DONE]`; the other families use
 * named events and end when the server closes the stream. Only the `error` event throws;
 * `response.failed` and `response.incomplete` are ordinary Responses events and are yielded.
 */
import { OmnigateError, REQUEST_ID_HEADER } from './omnigate-error.js';
import type { CallOptions, RawClient } from './raw-client.js';
import { parseSse, type SseEvent } from './sse.js';
import type {
  AnthropicErrorEvent,
  AnthropicMessageCreateRequest,
  AnthropicStreamEvent,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ResponseCreateRequest,
  ResponseErrorEvent,
  ResponseStreamEvent,
  SearchAnswerErrorEvent,
  SearchAnswerRequest,
  SearchAnswerStreamEvent,
} from './types.js';

/** A request body for a streaming helper: `stream` is set by the helper. */
export type StreamRequest<Body> = Omit<Body, 'stream'>;

interface StreamResult {
  data?: ReadableStream<Uint8Array> | null;
  error?: unknown;
  response: Response;
}

/** Throws for a non-2xx or non-SSE answer, else returns the events and the call's request id. */
function openEvents(result: StreamResult): {
  events: AsyncGenerator<SseEvent, void, undefined>;
  requestId: string | null;
} {
  const { response } = result;
  const requestId = response.headers.get(REQUEST_ID_HEADER);
  if (!response.ok) {
    throw OmnigateError.fromResponse(response, result.error);
  }
  const contentType = response.headers.get('content-type') ?? '';
  if (!result.data || !contentType.toLowerCase().startsWith('text/event-stream')) {
    result.data?.cancel().catch(() => undefined);
    throw new OmnigateError({
      status: response.status,
      type: 'invalid_response',
      code: null,
      param: null,
      message: `Expected a text/event-stream answer, got ${contentType || 'no body'}.`,
      requestId,
    });
  }
  return { events: parseSse(result.data), requestId };
}

function parseFrame(data: string, requestId: string | null): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new OmnigateError({
      status: null,
      type: 'invalid_response',
      code: null,
      param: null,
      message: `A stream frame is not JSON: ${data.slice(0, 200)}`,
      requestId,
    });
  }
}

/** Yields `{type, …}` frames of a named-event stream, throwing on the family's `error` event. */
async function* typedEvents<Event extends { type: string }, ErrorEvent extends Event>(
  result: StreamResult,
): AsyncGenerator<Exclude<Event, ErrorEvent>, void, undefined> {
  const { events, requestId } = openEvents(result);
  for await (const event of events) {
    const frame = parseFrame(event.data, requestId) as Event;
    if (event.event === 'error' || frame.type === 'error') {
      throw OmnigateError.fromStreamFrame(frame, requestId);
    }
    yield frame as Exclude<Event, ErrorEvent>;
  }
}

/** `POST /v1/chat/completions` with `stream: true`: the chunks, up to `data: [DONE]`. */
export async function* streamChatCompletion(
  raw: RawClient,
  body: StreamRequest<ChatCompletionRequest>,
  options: CallOptions = {},
): AsyncGenerator<ChatCompletionChunk, void, undefined> {
  const result = await raw.POST('/v1/chat/completions', {
    body: { ...body, stream: true },
    parseAs: 'stream',
    signal: options.signal,
  });
  const { events, requestId } = openEvents(result);
  for await (const event of events) {
    if (event.data === '[DONE]') {
      return;
    }
    const frame = parseFrame(event.data, requestId);
    if (typeof frame === 'object' && frame !== null && 'error' in frame) {
      throw OmnigateError.fromStreamFrame(frame, requestId);
    }
    yield frame as ChatCompletionChunk;
  }
}

/** `POST /v1/responses` with `stream: true`: `response.created` … `response.completed` (or `.failed`). */
export async function* streamResponse(
  raw: RawClient,
  body: StreamRequest<ResponseCreateRequest>,
  options: CallOptions = {},
): AsyncGenerator<Exclude<ResponseStreamEvent, ResponseErrorEvent>, void, undefined> {
  const result = await raw.POST('/v1/responses', {
    body: { ...body, stream: true },
    parseAs: 'stream',
    signal: options.signal,
  });
  yield* typedEvents<ResponseStreamEvent, ResponseErrorEvent>(result);
}

/** `POST /anthropic/v1/messages` with `stream: true`: `message_start` … `message_stop`. */
export async function* streamMessage(
  raw: RawClient,
  body: StreamRequest<AnthropicMessageCreateRequest>,
  options: CallOptions = {},
): AsyncGenerator<Exclude<AnthropicStreamEvent, AnthropicErrorEvent>, void, undefined> {
  const result = await raw.POST('/anthropic/v1/messages', {
    body: { ...body, stream: true },
    parseAs: 'stream',
    signal: options.signal,
  });
  yield* typedEvents<AnthropicStreamEvent, AnthropicErrorEvent>(result);
}

/** `POST /v1/search/answer` with `stream: true`: `answer.citations`, `answer.delta` …, `answer.done`. */
export async function* streamSearchAnswer(
  raw: RawClient,
  body: StreamRequest<SearchAnswerRequest>,
  options: CallOptions = {},
): AsyncGenerator<Exclude<SearchAnswerStreamEvent, SearchAnswerErrorEvent>, void, undefined> {
  const result = await raw.POST('/v1/search/answer', {
    body: { ...body, stream: true },
    parseAs: 'stream',
    signal: options.signal,
  });
  yield* typedEvents<SearchAnswerStreamEvent, SearchAnswerErrorEvent>(result);
}
