/** `POST /v1/music/generations`: the audio file itself, or JSON with a signed link or base64 MP3. */
import type { AppDeps } from './app-deps.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { composeMusic } from '../calls/compose-music.js';
import { linkMedia } from '../calls/link-media.js';
import { sendMediaBytes } from '../calls/send-media-bytes.js';
import { checkStorageRoom } from '../calls/storage-quota.js';
import type { ApiKeyRecord } from '../storage/key-store.js';

export { DEFAULT_MUSIC_MODEL } from '../calls/compose-music.js';

export function musicHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media'>): {
  createMusic: OperationHandler<'createMusic'>;
} {
  const now = deps.now ?? Date.now;
  return {
    async createMusic(req, res) {
      const keyId = (res.locals.apiKey as ApiKeyRecord).id;
      if (req.body.response_format === 'url') {
        checkStorageRoom(deps.media.storage, keyId, now()); // a full key is refused before the model runs
      }
      const { audio, seconds, answer } = await composeMusic(deps, res, req.body);
      if (answer === 'bytes') {
        sendMediaBytes(res, audio);
        return;
      }
      const created = now();
      const item =
        answer === 'url'
          ? { url: await linkMedia(deps.media, req, audio, created, keyId), duration: seconds, format: 'mp3' as const }
          : { b64_json: Buffer.from(audio.data).toString('base64'), duration: seconds, format: 'mp3' as const };
      const body = { created: Math.floor(created / 1000), data: [item] } satisfies ResponseBody<'createMusic', 200>;
      res.json(body);
    },
  };
}
