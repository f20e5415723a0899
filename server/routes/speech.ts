/** `POST /v1/audio/speech`: the audio file itself, its Content-Type following `response_format`. */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler } from '../http/operation-types.js';
import { sendMediaBytes } from '../calls/media/send-media-bytes.js';
import { synthesizeSpeech } from '../calls/media/synthesize-speech.js';

export function speechHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal'>): {
  createSpeech: OperationHandler<'createSpeech'>;
} {
  return {
    async createSpeech(req, res) {
      const { audio } = await synthesizeSpeech(deps, scopeOf(res), req.body);
      sendMediaBytes(res, audio);
    },
  };
}
