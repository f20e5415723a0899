/**
 * One music generation as `POST /v1/music/generations` runs it, shared by that route and the `generate_music`
 * tool: decode, resolve the model for the key, compose, record the seconds.
 */
import type { CallScope } from '../../http/call-scope.js';
import type { GeneratedMedia } from '../../core/models.js';
import { decodeMusicRequest, type MusicAnswer } from '../../formats/openai-media/music-request.js';
import type { components } from '../../../generated/api.js';
import { prepareCall, type CallDeps } from '../prepare-call.js';

export const DEFAULT_MUSIC_MODEL = 'local:music';

export async function composeMusic(
  deps: CallDeps,
  scope: CallScope,
  body: components['schemas']['MusicGenerationRequest'],
): Promise<{ audio: GeneratedMedia; model: string; seconds: number; answer: MusicAnswer }> {
  const { options, answer } = decodeMusicRequest(body);
  const call = prepareCall(deps, scope, body.model ?? DEFAULT_MUSIC_MODEL, 'music');
  const result = await call.model.compose(options, call.context);
  const record = call.call;
  const seconds = Math.round(result.durationSeconds * 1000) / 1000;
  record.units = seconds;
  record.media = { seconds };
  return { audio: result.audio, model: call.resolved.entry.id, seconds, answer };
}
