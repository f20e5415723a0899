/**
 * `GET /v1/media/{id}`: the bytes behind a signed link, for anyone holding the link (no API key: an `<img>` or
 * `<audio>` tag loads it). The signature is checked before anything is looked up, so a guessed id learns nothing.
 */
import type { AppDeps } from './app-deps.js';
import { ApiError } from '../core/api-error.js';
import type { OperationHandler } from '../http/operation-types.js';
import { sendStoredBytes } from '../calls/send-stored-bytes.js';

export function mediaHandlers(deps: Pick<AppDeps, 'media' | 'now'>): {
  downloadMedia: OperationHandler<'downloadMedia'>;
} {
  const now = deps.now ?? Date.now;
  return {
    async downloadMedia(req, res) {
      const { id } = req.params;
      const expires = Number(req.query.expires);
      const nowSeconds = Math.floor(now() / 1000);
      const verdict = deps.media.links.check(id, expires, String(req.query.signature), nowSeconds);
      if (verdict === 'invalid_signature') {
        throw new ApiError(403, 'This media link is not valid: its signature does not match.', {
          code: 'invalid_signature',
          param: 'signature',
        });
      }
      if (verdict === 'expired') {
        throw new ApiError(
          410,
          `This media link expired at ${new Date(expires * 1000).toISOString()}; its file has been deleted.`,
          { code: 'link_expired' },
        );
      }
      await sendStoredBytes(req, res, deps.media.blobs, id, {
        headers: { 'Cache-Control': `private, max-age=${Math.max(0, expires - nowSeconds)}` },
        missing: () => new ApiError(404, 'This medium no longer exists.', { code: 'media_not_found' }),
      });
    },
  };
}
