/** `POST /v1/music/generations`: the audio file itself, or JSON with a signed link or base64 MP3. */
import type { AppDeps } from './app-deps.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { decodeMusicRequest } from '../formats/openai-media/music-request.js';
import { linkMedia } from '../calls/link-media.js';
import { prepareCall } from '../calls/prepare-call.js';
import { sendMediaBytes } from '../calls/send-media-bytes.js';
import type { CallRecord } from '../usage/call-record.js';

export const DEFAULT_MUSIC_MODEL = 'local:music';

export function musicHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media'>): {
  createMusic: OperationHandler<'createMusic'>;
} {
  const now = deps.now ?? Date.now;
  return {
    async createMusic(req, res) {
      const { options, answer } = decodeMusicRequest(req.body);
      const call = prepareCall(deps, res, req.body.model ?? DEFAULT_MUSIC_MODEL, 'music');
      const result = await call.model.compose(options, call.context);
      const record = res.locals.call as CallRecord;
      const seconds = Math.round(result.durationSeconds * 1000) / 1000;
      record.units = seconds;
      record.media = { seconds };
      if (answer === 'bytes') {
        sendMediaBytes(res, result.audio);
        return;
      }
      const created = now();
      const item =
        answer === 'url'
          ? { url: await linkMedia(deps.media, req, result.audio, created), duration: seconds, format: 'mp3' as const }
          : { b64_json: Buffer.from(result.audio.data).toString('base64'), duration: seconds, format: 'mp3' as const };
      const body = { created: Math.floor(created / 1000), data: [item] } satisfies ResponseBody<'createMusic', 200>;
      res.json(body);
    },
  };
}
