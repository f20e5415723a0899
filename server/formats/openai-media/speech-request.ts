/** OpenAI's speech request (plus `volume`, `pitch`, `language`) → `SpeechCallOptions`. */
import type { SpeechCallOptions } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

type SpeechRequest = components['schemas']['SpeechRequest'];

export function decodeSpeechRequest(body: SpeechRequest): SpeechCallOptions {
  return {
    input: body.input,
    voice: body.voice,
    format: body.response_format ?? 'mp3',
    speed: body.speed ?? 1,
    volume: body.volume ?? 1,
    pitch: body.pitch ?? 0,
    language: body.language ?? 'auto',
    instructions: body.instructions,
  };
}
