/**
 * Canonical stream parts → Responses stream events (`response.created` … `response.completed`).
 *
 * Every event carries `sequence_number`, counting from 0. Each output item is announced by
 * `response.output_item.added`, filled by its deltas and closed by `response.output_item.done`:
 * a `message` (content_part.added → output_text.delta* → output_text.done → content_part.done), a
 * `function_call` (function_call_arguments.delta* → .done) or a `reasoning` item (reasoning_summary_part.added
 * → reasoning_summary_text.delta* → .done → reasoning_summary_part.done). The last event carries the same
 * response object `encodeResponse` would build from the same parts.
 *
 * A `function_call` item of a function the caller offered inside a `namespace` tool carries that `namespace`
 * from `output_item.added` on, as in the non-streamed answer.
 *
 * Function calls stay open until their `tool-call-end` even when text or reasoning arrives in between (some
 * engines interleave an argument tail with reasoning), so no argument fragment is lost. Text after a tool call
 * starts a new message item. The first upstream part is read before any event is produced, so an upstream
 * that refuses the call fails the iteration before `response.created` and the route can still answer with a
 * plain HTTP error. Events are data only; SSE framing belongs to `http/sse.ts`.
 */
import { ApiError } from '../../core/api-error.js';
import type { ChatStreamPart, Usage } from '../../core/chat.js';
import { messageItem, type TextMessageItem } from './encode-response.js';
import { encodeUsage } from './encode-usage.js';
import { encryptedContentOf } from './encrypted-reasoning.js';
import { mapFinishReason } from './map-finish-reason.js';
import { buildResponseObject, namespaceOf, unixSecondsNow, type ResponseMeta } from './response-object.js';
import type {
  OutputFunctionCall,
  OutputItem,
  OutputMessage,
  OutputReasoning,
  ResponseObject,
  ResponseStreamEvent,
  ResponsesWireEvent,
} from './wire-types.js';

/** Where a stream stands; `encodeStreamFailure` continues from it. */
export interface ResponsesStreamState {
  readonly meta: ResponseMeta;
  /** Output items in `output_index` order as they stand now; open ones are still filling. */
  readonly output: OutputItem[];
  /** The `sequence_number` of the next event. */
  nextSequenceNumber: number;
  /** True once `response.created` was produced: a failure must then be reported inside the stream. */
  started: boolean;
}

export interface ResponsesStreamResult {
  response: ResponseObject;
  usage: Usage;
}

export interface ResponsesStream extends AsyncIterable<ResponsesWireEvent> {
  readonly state: ResponsesStreamState;
  /** The final response object and usage, once the iteration has finished; undefined before or on failure. */
  final(): ResponsesStreamResult | undefined;
}

/** Distributes `Omit` over the event union, so each event can be written without its sequence number. */
type Unsequenced<T> = T extends ResponseStreamEvent ? Omit<T, 'sequence_number'> : never;

interface OpenCall {
  item: OutputFunctionCall;
  outputIndex: number;
}

export function encodeResponsesStream(parts: AsyncIterable<ChatStreamPart>, meta: ResponseMeta): ResponsesStream {
  return new ResponsesStreamEncoder(parts, meta);
}

class ResponsesStreamEncoder implements ResponsesStream {
  readonly state: ResponsesStreamState;
  private result: ResponsesStreamResult | undefined;
  private pending: ResponsesWireEvent[] = [];
  private message: { item: TextMessageItem; outputIndex: number } | undefined;
  private reasoning: { item: OutputReasoning; outputIndex: number } | undefined;
  private readonly calls = new Map<number, OpenCall>();

  constructor(
    private readonly parts: AsyncIterable<ChatStreamPart>,
    meta: ResponseMeta,
  ) {
    this.state = { meta, output: [], nextSequenceNumber: 0, started: false };
  }

  final(): ResponsesStreamResult | undefined {
    return this.result;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ResponsesWireEvent> {
    const iterator = this.parts[Symbol.asyncIterator]();
    let exhausted = false;
    try {
      let next = await iterator.next();
      this.state.started = true;
      const snapshot = buildResponseObject(this.state.meta, { status: 'in_progress', output: [], usage: null });
      this.emit({ type: 'response.created', response: snapshot });
      this.emit({ type: 'response.in_progress', response: structuredClone(snapshot) });
      yield* this.flush();
      while (!next.done) {
        const finished = this.handle(next.value);
        yield* this.flush();
        if (finished) {
          return;
        }
        next = await iterator.next();
      }
      exhausted = true;
      throw new ApiError(502, 'The model stream ended before it finished.', { code: 'upstream_error' });
    } finally {
      if (!exhausted) {
        // Stops the upstream call when we finished early or our caller went away.
        await iterator.return?.();
      }
    }
  }

  private *flush(): Generator<ResponsesWireEvent> {
    const events = this.pending;
    this.pending = [];
    yield* events;
  }

  private emit(event: Unsequenced<ResponseStreamEvent>): void {
    const data: ResponseStreamEvent = { ...event, sequence_number: this.state.nextSequenceNumber++ };
    this.pending.push({ event: data.type, data });
  }

  /** Handles one part; true when it was the `finish`. */
  private handle(part: ChatStreamPart): boolean {
    switch (part.type) {
      case 'text-delta':
        if (part.text !== '') {
          this.closeReasoning();
          this.appendText(part.text);
        }
        return false;
      case 'reasoning-delta':
        if (part.text !== '') {
          this.closeMessage('completed');
          this.appendReasoning(part.text);
        }
        return false;
      case 'reasoning-end':
        this.endReasoning(encryptedContentOf(part));
        return false;
      case 'tool-call-start':
        this.startCall(part.index, part.id, part.name);
        return false;
      case 'tool-call-delta':
        this.appendArguments(part.index, part.argumentsDelta);
        return false;
      case 'tool-call-end':
        this.closeCall(part.index);
        return false;
      case 'finish':
        this.finish(part.finishReason, part.usage);
        return true;
    }
  }

  private addItem(item: OutputItem, added: OutputItem): number {
    const outputIndex = this.state.output.length;
    this.state.output.push(item);
    this.emit({ type: 'response.output_item.added', output_index: outputIndex, item: added });
    return outputIndex;
  }

  private appendText(text: string): void {
    if (!this.message) {
      const item = messageItem(this.state.meta.generateId('msg'), '', 'in_progress');
      const outputIndex = this.addItem(item, { ...item, content: [] });
      this.message = { item, outputIndex };
      this.emit({
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: outputIndex,
        content_index: 0,
        part: { ...item.content[0] },
      });
    }
    const { item, outputIndex } = this.message;
    item.content[0].text += text;
    this.emit({
      type: 'response.output_text.delta',
      item_id: item.id,
      output_index: outputIndex,
      content_index: 0,
      delta: text,
      logprobs: [],
    });
  }

  private closeMessage(status: OutputMessage['status']): void {
    if (!this.message) {
      return;
    }
    const { item, outputIndex } = this.message;
    this.message = undefined;
    const part = item.content[0];
    const at = { item_id: item.id, output_index: outputIndex, content_index: 0 };
    this.emit({ type: 'response.output_text.done', ...at, text: part.text, logprobs: [] });
    this.emit({ type: 'response.content_part.done', ...at, part: { ...part } });
    item.status = status;
    this.emit({ type: 'response.output_item.done', output_index: outputIndex, item: structuredClone(item) });
  }

  private openReasoning(): { item: OutputReasoning; outputIndex: number } {
    const item: OutputReasoning = { id: this.state.meta.generateId('rs'), type: 'reasoning', summary: [] };
    const outputIndex = this.addItem(item, { ...item, summary: [] });
    this.reasoning = { item, outputIndex };
    return this.reasoning;
  }

  private appendReasoning(text: string): void {
    const { item, outputIndex } = this.reasoning ?? this.openReasoning();
    if (item.summary.length === 0) {
      item.summary.push({ type: 'summary_text', text: '' });
      this.emit({
        type: 'response.reasoning_summary_part.added',
        item_id: item.id,
        output_index: outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
    }
    item.summary[0]!.text += text; // pushed above when empty
    const at = { item_id: item.id, output_index: outputIndex, summary_index: 0 };
    this.emit({ type: 'response.reasoning_summary_text.delta', ...at, delta: text });
  }

  /** `reasoning-end`: attaches the opaque state and closes the item (a text-less one exists only for that state). */
  private endReasoning(encryptedContent: string | undefined): void {
    if (!this.reasoning) {
      if (encryptedContent === undefined) {
        return;
      }
      this.closeMessage('completed');
      this.openReasoning();
    }
    if (encryptedContent !== undefined) {
      this.reasoning!.item.encrypted_content = encryptedContent;
    }
    this.closeReasoning();
  }

  private closeReasoning(): void {
    if (!this.reasoning) {
      return;
    }
    const { item, outputIndex } = this.reasoning;
    this.reasoning = undefined;
    const summary = item.summary[0];
    if (summary) {
      const at = { item_id: item.id, output_index: outputIndex, summary_index: 0 };
      this.emit({ type: 'response.reasoning_summary_text.done', ...at, text: summary.text });
      this.emit({ type: 'response.reasoning_summary_part.done', ...at, part: { ...summary } });
    }
    this.emit({ type: 'response.output_item.done', output_index: outputIndex, item: structuredClone(item) });
  }

  private startCall(index: number, callId: string, name: string): void {
    if (this.calls.has(index)) {
      throw new ApiError(502, `The model stream started tool call ${index} twice.`, { code: 'upstream_error' });
    }
    this.closeMessage('completed');
    this.closeReasoning();
    const item: OutputFunctionCall = {
      id: this.state.meta.generateId('fc'),
      type: 'function_call',
      status: 'in_progress',
      call_id: callId,
      name,
      ...namespaceOf(this.state.meta, name),
      arguments: '',
    };
    const outputIndex = this.addItem(item, { ...item });
    this.calls.set(index, { item, outputIndex });
  }

  private appendArguments(index: number, delta: string): void {
    const call = this.calls.get(index);
    if (!call) {
      throw new ApiError(502, `The model stream continued tool call ${index}, which is not open.`, {
        code: 'upstream_error',
      });
    }
    if (delta === '') {
      return;
    }
    call.item.arguments += delta;
    this.emit({
      type: 'response.function_call_arguments.delta',
      item_id: call.item.id,
      output_index: call.outputIndex,
      delta,
    });
  }

  private closeCall(index: number): void {
    const call = this.calls.get(index);
    if (!call) {
      return;
    }
    this.calls.delete(index);
    const { item, outputIndex } = call;
    this.emit({
      type: 'response.function_call_arguments.done',
      item_id: item.id,
      output_index: outputIndex,
      name: item.name,
      arguments: item.arguments,
    });
    item.status = 'completed';
    this.emit({ type: 'response.output_item.done', output_index: outputIndex, item: structuredClone(item) });
  }

  private finish(finishReason: Parameters<typeof mapFinishReason>[0], usage: Usage): void {
    const outcome = mapFinishReason(finishReason);
    // Close what is still open in output order; a message cut off by the token limit is the last item.
    const open: Array<{ outputIndex: number; close: () => void }> = [];
    const lastIndex = this.state.output.length - 1;
    if (this.message) {
      const status =
        outcome.status === 'incomplete' && this.message.outputIndex === lastIndex ? 'incomplete' : 'completed';
      open.push({ outputIndex: this.message.outputIndex, close: () => this.closeMessage(status) });
    }
    if (this.reasoning) {
      open.push({ outputIndex: this.reasoning.outputIndex, close: () => this.closeReasoning() });
    }
    for (const [index, call] of this.calls) {
      open.push({ outputIndex: call.outputIndex, close: () => this.closeCall(index) });
    }
    open.sort((a, b) => a.outputIndex - b.outputIndex);
    for (const item of open) {
      item.close();
    }

    const response = buildResponseObject(this.state.meta, {
      status: outcome.status,
      output: this.state.output,
      usage: encodeUsage(usage),
      error: outcome.error,
      incompleteDetails: outcome.incompleteDetails,
      completedAt: outcome.status === 'completed' ? (this.state.meta.now ?? unixSecondsNow)() : null,
    });
    this.emit({ type: `response.${outcome.status}`, response });
    this.result = { response, usage };
  }
}
