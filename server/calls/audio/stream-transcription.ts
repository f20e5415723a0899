/**
 * A streamed transcription (`stream: true`): the model's first part is awaited before any header, so an
 * upstream refusal is still a plain HTTP error; then `transcript.text.delta` events and one
 * `transcript.text.done`, named events as OpenAI sends them. With `response_format: diarized_json` a diarizing
 * model's deltas carry their `segment_id` and each finished speaker segment is a `transcript.text.segment` event. A failure after the first byte is an `error`
 * event in the OpenAI envelope. The seconds are recorded once the stream ends.
 */
import type { Response } from 'express';
import type { TranscriptionStreamPart } from '../../core/models.js';
import { encodeTranscriptionEvent } from '../../formats/openai-audio/transcription-answer.js';
import { openAiErrorEnvelope } from '../../formats/error-envelopes.js';
import { openSse } from '../../http/sse.js';
import { streamFailure } from '../stream-failure.js';
import { recordTranscription, type PreparedTranscription } from './transcribe-audio.js';

export async function sendStreamedTranscription(res: Response, prepared: PreparedTranscription): Promise<void> {
  const { call: preparedCall } = prepared;
  const record = preparedCall.call;
  const iterator = preparedCall.model
    .streamTranscription(prepared.options, preparedCall.context)
    [Symbol.asyncIterator]();
  let step = await iterator.next();
  record.defer();
  const sse = openSse(res);
  let status = 200;
  let text = '';
  const send = (part: TranscriptionStreamPart) => {
    const data = encodeTranscriptionEvent(part, prepared.seconds);
    sse.send({ event: data.type, data });
  };
  try {
    let finished = false;
    while (!step.done) {
      const part = step.value;
      if (part.type === 'text-delta') {
        text += part.delta;
      } else if (part.type === 'finish') {
        finished = true;
        recordTranscription(prepared, part.transcript);
      }
      send(part);
      step = await iterator.next();
    }
    if (!finished) {
      const transcript = { text };
      recordTranscription(prepared, transcript);
      send({ type: 'finish', transcript });
    }
  } catch (error) {
    const failure = streamFailure(preparedCall, error);
    status = failure.status;
    if (status !== 499) {
      preparedCall.logger.error(
        { requestId: preparedCall.context.requestId, status, err: failure.error.cause ?? error },
        `transcription stream failed after it started: ${failure.error.message}`,
      );
    }
    sse.send({ event: 'error', data: { type: 'error', error: openAiErrorEnvelope(failure.error).error } });
  } finally {
    await iterator.return?.();
    sse.end();
    record.complete(status);
  }
}
