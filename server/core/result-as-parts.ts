/**
 * A whole chat result replayed as stream parts, for an upstream that answered a streamed call with one JSON
 * body: the stream encoders then work as if it had streamed. Empty pieces are left out (an empty reasoning
 * text or argument string would only be an empty delta), and optional fields only appear when set.
 */
import type { ChatResult, ChatStreamPart } from './chat.js';

export function* resultAsParts(result: ChatResult): Generator<ChatStreamPart> {
  let index = 0;
  for (const part of result.content) {
    if (part.type === 'text') {
      yield { type: 'text-delta', text: part.text };
    } else if (part.type === 'reasoning') {
      if (part.text !== '') {
        yield { type: 'reasoning-delta', text: part.text };
      }
      const end: ChatStreamPart = { type: 'reasoning-end' };
      if (part.signature !== undefined) {
        end.signature = part.signature;
      }
      if (part.redactedData !== undefined) {
        end.redactedData = part.redactedData;
      }
      yield end;
    } else {
      yield { type: 'tool-call-start', index, id: part.id, name: part.name };
      if (part.arguments.length > 0) {
        yield { type: 'tool-call-delta', index, argumentsDelta: part.arguments };
      }
      yield { type: 'tool-call-end', index };
      index += 1;
    }
  }
  const finish: ChatStreamPart = { type: 'finish', finishReason: result.finishReason, usage: result.usage };
  if (result.stopSequence !== undefined) {
    finish.stopSequence = result.stopSequence;
  }
  yield finish;
}
