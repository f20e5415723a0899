/** `POST /v1/music/generations`: the audio file itself, or JSON with a signed link or base64 MP3. */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { composeMusic } from '../calls/media/compose-music.js';
import { linkMedia } from '../calls/link-media.js';
import { sendMediaBytes } from '../calls/media/send-media-bytes.js';
import { checkStorageRoom } from '../calls/storage-quota.js';
import { encodeMusicResponse } from '../formats/openai-media/media-answer.js';

export { DEFAULT_MUSIC_MODEL } from '../calls/media/compose-music.js';

export function musicHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media'>): {
  createMusic: OperationHandler<'createMusic'>;
} {
  const now = deps.now ?? Date.now;
  return {
    async createMusic(req, res) {
      const scope = scopeOf(res);
      if (req.body.response_format === 'url') {
        await checkStorageRoom(deps.media.storage, scope.key.id, now()); // a full key is refused before the model runs
      }
      const { audio, seconds, answer } = await composeMusic(deps, scope, req.body);
      if (answer === 'bytes') {
        sendMediaBytes(res, audio);
        return;
      }
      const created = now();
      const url =
        answer === 'url' ? await linkMedia(deps.media, scope.baseUrl, audio, created, scope.key.id) : undefined;
      res.json(encodeMusicResponse(audio, seconds, created, url) satisfies ResponseBody<'createMusic', 200>);
    },
  };
}
