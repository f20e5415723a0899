/**
 * Streams a stored blob as the answer, with its media type and length, and one byte range when asked
 * (`Range: bytes=…` → 206 with `Content-Range`), which is what lets a `<video>` element seek. Several ranges
 * at once are answered with the whole file (allowed by RFC 9110); a range outside the file is 416.
 */
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { ApiError } from '../core/api-error.js';
import type { BlobStore } from '../storage/blob-store.js';

export interface StoredBytesOptions {
  /** Headers besides type, length and ranges (a download's name, caching). */
  headers?: Record<string, string>;
  /** The answer when the bytes are gone (purged, deleted meanwhile), in the route's own words. */
  missing?: () => ApiError;
}

const contentGone = () => new ApiError(404, 'This content no longer exists.', { code: 'content_not_found' });

export async function sendStoredBytes(
  req: Pick<Request, 'headers' | 'range'>,
  res: Response,
  blobs: BlobStore,
  id: string,
  { headers = {}, missing = contentGone }: StoredBytesOptions = {},
): Promise<void> {
  const meta = await blobs.get(id);
  if (!meta) {
    throw missing();
  }
  const ranges = req.headers.range ? req.range(meta.size, { combine: true }) : undefined;
  if (ranges === -1) {
    throw new ApiError(416, `The range ${req.headers.range?.slice(0, 100)} lies outside the ${meta.size}-byte file.`, {
      code: 'range_not_satisfiable',
      headers: { 'content-range': `bytes */${meta.size}` },
    });
  }
  const range = Array.isArray(ranges) && ranges.length === 1 && ranges.type === 'bytes' ? ranges[0] : undefined;
  const stream = await blobs.open(id, range);
  if (!stream) {
    throw missing();
  }
  res.status(range ? 206 : 200);
  res.setHeader('Content-Type', meta.mediaType);
  res.setHeader('Content-Length', String(range ? range.end - range.start + 1 : meta.size));
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (range) {
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${meta.size}`);
  }
  for (const [name, value] of Object.entries(headers)) {
    res.setHeader(name, value);
  }
  try {
    await pipeline(stream, res);
  } catch (error) {
    if (res.destroyed && !res.writableFinished) {
      // The client closed the connection (often right after the last byte, with a player or `curl | head`):
      // nothing failed on our side, so it is a client abort, logged at info, not a 500 with a stack.
      throw new ApiError(499, 'The client closed the connection during the download.', {
        code: 'client_closed_request',
        cause: error,
      });
    }
    throw error;
  }
}
