/**
 * The music request → `MusicCallOptions`. `url` and `b64_json` answers carry MP3, so the engine is asked for MP3
 * then; the three file formats are answered as the bytes themselves.
 */
import type { MusicCallOptions } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

type MusicRequest = components['schemas']['MusicGenerationRequest'];
export type MusicAnswer = 'bytes' | 'url' | 'b64_json';

export function decodeMusicRequest(body: MusicRequest): { options: MusicCallOptions; answer: MusicAnswer } {
  const requested = body.response_format ?? 'mp3';
  const answer: MusicAnswer = requested === 'url' || requested === 'b64_json' ? requested : 'bytes';
  return {
    answer,
    options: {
      prompt: body.prompt ?? '',
      lyrics: body.lyrics,
      instrumental: body.instrumental ?? false,
      durationSeconds: body.duration ?? 30,
      seed: body.seed,
      format: requested === 'url' || requested === 'b64_json' ? 'mp3' : requested,
    },
  };
}
