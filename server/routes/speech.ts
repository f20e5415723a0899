/** `POST /v1/audio/speech`: the audio file itself, its Content-Type following `response_format`. */
import type { AppDeps } from './app-deps.js';
import type { OperationHandler } from '../http/operation-types.js';
import { decodeSpeechRequest } from '../formats/openai-media/speech-request.js';
import { prepareCall } from '../calls/prepare-call.js';
import { sendMediaBytes } from '../calls/send-media-bytes.js';
import type { CallRecord } from '../usage/call-record.js';

export function speechHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal'>): { createSpeech: OperationHandler<'createSpeech'> } {
  return {
    async createSpeech(req, res) {
      const options = decodeSpeechRequest(req.body);
      const call = prepareCall(deps, res, req.body.model, 'speech');
      const { audio, usage } = await call.model.synthesize(options, call.context);
      const record = res.locals.call as CallRecord;
      record.units = usage.characters;
      record.media = { characters: usage.characters, seconds: round(usage.seconds) };
      sendMediaBytes(res, audio);
    },
  };
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
