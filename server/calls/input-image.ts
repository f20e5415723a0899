/**
 * The input image of a generation (a video's `input_reference`): an uploaded multipart file, a `data:` URL, an
 * http(s) URL (fetched through the SSRF guard: a caller's URL may not reach our network), or a file the same
 * key stored with `POST /v1/files` (another key's file id is unknown, as on every files route).
 * Whatever the source, the bytes must be a PNG, JPEG or WebP image, recognised by their magic, else 422.
 */
import { ApiError } from '../core/api-error.js';
import type { GeneratedMedia } from '../core/models.js';
import { readImageHeader } from '../providers/upstream/image-header.js';
import { createSafeFetcher } from '../providers/upstream/safe-fetch.js';

/** A file part as the validator's multipart parser (multer, in memory) hands it over. */
export interface UploadedFile {
  fieldname: string;
  buffer: Buffer;
  originalname?: string;
}

const ACCEPTED = new Set(['image/png', 'image/jpeg', 'image/webp']);
const FETCH_TIMEOUT_MS = 15_000;

function asImage(bytes: Uint8Array): GeneratedMedia {
  const header = readImageHeader(bytes);
  if (!header || !ACCEPTED.has(header.mediaType)) {
    throw new ApiError(422, 'input_reference must be a PNG, JPEG or WebP image.', { param: 'input_reference', code: 'invalid_image' });
  }
  return { data: bytes, mediaType: header.mediaType };
}

export async function readInputImage(input: {
  upload?: UploadedFile;
  reference?: { image_url?: string; file_id?: string };
  /** The caller's own stored file's bytes, undefined when the key has no such file. */
  storedFile?: (id: string) => Promise<Uint8Array | undefined>;
  signal: AbortSignal;
}): Promise<GeneratedMedia | undefined> {
  if (input.upload) {
    return asImage(new Uint8Array(input.upload.buffer));
  }
  const url = input.reference?.image_url;
  if (url?.startsWith('data:')) {
    const comma = url.indexOf(',');
    if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) {
      throw new ApiError(400, 'A data URL in input_reference.image_url must be base64 (`data:image/png;base64,…`).', { param: 'input_reference.image_url' });
    }
    return asImage(new Uint8Array(Buffer.from(url.slice(comma + 1), 'base64')));
  }
  if (url) {
    const fetcher = createSafeFetcher({ provider: 'input_reference', timeoutMs: FETCH_TIMEOUT_MS });
    try {
      return asImage((await fetcher.fetch(url, input.signal)).bytes);
    } finally {
      await fetcher.close();
    }
  }
  if (input.reference?.file_id !== undefined) {
    const bytes = await input.storedFile?.(input.reference.file_id);
    if (!bytes) {
      throw new ApiError(404, `No file '${input.reference.file_id.slice(0, 128)}'.`, { param: 'input_reference.file_id', code: 'file_not_found' });
    }
    return asImage(bytes);
  }
  return undefined;
}
