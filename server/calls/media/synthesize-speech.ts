/**
 * One speech synthesis as `POST /v1/audio/speech` runs it, shared by that route and the `text_to_speech` tool:
 * decode, resolve the model for the key, synthesize, record characters and seconds.
 */
import type { CallScope } from '../../http/call-scope.js';
import type { GeneratedMedia } from '../../core/models.js';
import { decodeSpeechRequest } from '../../formats/openai-media/speech-request.js';
import type { components } from '../../../generated/api.js';
import { prepareCall, type CallDeps } from '../prepare-call.js';

export async function synthesizeSpeech(
  deps: CallDeps,
  scope: CallScope,
  body: components['schemas']['SpeechRequest'],
): Promise<{ audio: GeneratedMedia; model: string; characters: number; seconds: number }> {
  const options = decodeSpeechRequest(body);
  const call = prepareCall(deps, scope, body.model, 'speech');
  const { audio, usage } = await call.model.synthesize(options, call.context);
  const record = call.call;
  const seconds = Math.round(usage.seconds * 1000) / 1000;
  record.units = usage.characters;
  record.media = { characters: usage.characters, seconds };
  return { audio, model: call.resolved.entry.id, characters: usage.characters, seconds };
}
