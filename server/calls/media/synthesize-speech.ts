/**
 * One speech synthesis as `POST /v1/audio/speech` runs it, shared by that route and the `text_to_speech` tool:
 * decode, resolve the model for the key, synthesize, record characters and seconds.
 */
import type { Response } from 'express';
import type { GeneratedMedia } from '../../core/models.js';
import { decodeSpeechRequest } from '../../formats/openai-media/speech-request.js';
import type { components } from '../../../generated/api.js';
import type { CallRecord } from '../../usage/call-record.js';
import { prepareCall, type CallDeps } from '../prepare-call.js';

export async function synthesizeSpeech(
  deps: CallDeps,
  res: Response,
  body: components['schemas']['SpeechRequest'],
): Promise<{ audio: GeneratedMedia; model: string; characters: number; seconds: number }> {
  const options = decodeSpeechRequest(body);
  const call = prepareCall(deps, res, body.model, 'speech');
  const { audio, usage } = await call.model.synthesize(options, call.context);
  const record = res.locals.call as CallRecord;
  const seconds = Math.round(usage.seconds * 1000) / 1000;
  record.units = usage.characters;
  record.media = { characters: usage.characters, seconds };
  return { audio, model: call.resolved.entry.id, characters: usage.characters, seconds };
}
