/**
 * The input image of a generation (a video's `input_reference`): an uploaded multipart file, a `data:` URL, an
 * http(s) URL (fetched through the SSRF guard: a caller's URL may not reach our network), or a file the same
 * key stored with `POST /v1/files` (another key's file id is unknown, as on every files route).
 * Whatever the source, the bytes must be a PNG, JPEG or WebP image, recognised by their magic, else 422, of
 * at most MAX_INPUT_PIXELS by its header, else 400 (before any worker decodes it).
 */
import { ApiError } from '../../core/api-error.js';
import { checkInputPixels } from '../../core/input-pixels.js';
import type { GeneratedMedia } from '../../core/models.js';
import { readImageHeader } from '../../providers/upstream/image-header.js';
import { createSafeFetcher, type SafeFetchSettings } from '../../providers/upstream/safe-fetch.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { FileStore } from '../../storage/file-store.js';
import { readStoredFile } from '../files/read-stored-file.js';

/** A file part as the validator's multipart parser (multer, in memory) hands it over. */
export interface UploadedFile {
  fieldname: string;
  buffer: Buffer;
  originalname?: string;
}

/** The largest stored file taken as an input image by `file_id`. */
const MAX_INPUT_FILE_BYTES = 50 * 1024 * 1024;
const ACCEPTED = new Set(['image/png', 'image/jpeg', 'image/webp']);
const FETCH_TIMEOUT_MS = 15_000;

/** Who reads the image: the field errors name, the formats taken, and (tests only) the DNS of the URL fetch. */
export interface InputImageSettings {
  /** Default `input_reference`; the image_understanding tool names its own fields. */
  param?: string;
  /** The field of the URL and file id under `param` (`input_reference.image_url`), or top-level names. */
  urlParam?: string;
  fileParam?: string;
  /** Also take GIF (default: PNG, JPEG and WebP, what the video engines decode). */
  gif?: boolean;
  resolve?: SafeFetchSettings['resolve'];
}

function asImage(bytes: Uint8Array, settings: InputImageSettings): GeneratedMedia {
  const header = readImageHeader(bytes);
  const param = settings.param ?? 'input_reference';
  if (!header || !(ACCEPTED.has(header.mediaType) || (settings.gif && header.mediaType === 'image/gif'))) {
    throw new ApiError(422, `${param} must be a PNG, JPEG${settings.gif ? ', GIF' : ''} or WebP image.`, {
      param,
      code: 'invalid_image',
    });
  }
  checkInputPixels(param, header);
  return { data: bytes, mediaType: header.mediaType };
}

/**
 * The caller gave this URL, so a URL we refuse (a private address, too large) or cannot fetch is the request's
 * problem, a 422 naming the field — not a 502, which would blame an upstream and invite a retry.
 */
function callerUrlError(error: unknown, urlParam: string, signal: AbortSignal): unknown {
  if (signal.aborted || !(error instanceof ApiError)) {
    return error;
  }
  const refused = error.code === 'upstream_url_refused' || error.code === 'upstream_result_too_large';
  const reason = error.message.replace(
    /^(A result of )?[Uu]pstream \S+ (answered with a URL the gateway refuses to fetch: )?/,
    '',
  );
  return new ApiError(
    422,
    `${urlParam} could not be used: ${refused ? 'the gateway refuses to fetch it' : 'fetching it failed'} (${reason}).`,
    {
      param: urlParam,
      code: refused ? 'image_url_refused' : 'image_url_unreachable',
      cause: error,
    },
  );
}

/** The caller's own stored files as input images (`storedFile` of readInputImage), capped in size. */
export function storedImageFiles(
  deps: { store: FileStore; blobs: BlobStore },
  keyId: string,
  options: { param: string; nowSeconds: number },
): (id: string) => Promise<Uint8Array | undefined> {
  return (id) => readStoredFile(deps, keyId, id, { maxBytes: MAX_INPUT_FILE_BYTES, ...options });
}

export async function readInputImage(
  input: {
    upload?: UploadedFile;
    reference?: { image_url?: string; file_id?: string };
    /** The caller's own stored file's bytes, undefined when the key has no such file. */
    storedFile?: (id: string) => Promise<Uint8Array | undefined>;
    signal: AbortSignal;
  },
  settings: InputImageSettings = {},
): Promise<GeneratedMedia | undefined> {
  const urlParam = settings.urlParam ?? 'input_reference.image_url';
  if (input.upload) {
    return asImage(new Uint8Array(input.upload.buffer), settings);
  }
  const url = input.reference?.image_url;
  if (url?.startsWith('data:')) {
    const comma = url.indexOf(',');
    if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) {
      throw new ApiError(400, `A data URL in ${urlParam} must be base64 (\`data:image/png;base64,…\`).`, {
        param: urlParam,
      });
    }
    return asImage(new Uint8Array(Buffer.from(url.slice(comma + 1), 'base64')), settings);
  }
  if (url) {
    const fetcher = createSafeFetcher({
      provider: settings.param ?? 'input_reference',
      timeoutMs: FETCH_TIMEOUT_MS,
      resolve: settings.resolve,
    });
    let bytes: Uint8Array;
    try {
      bytes = (await fetcher.fetch(url, input.signal)).bytes;
    } catch (error) {
      throw callerUrlError(error, urlParam, input.signal);
    } finally {
      await fetcher.close();
    }
    return asImage(bytes, settings);
  }
  if (input.reference?.file_id !== undefined) {
    const bytes = await input.storedFile?.(input.reference.file_id);
    if (!bytes) {
      throw new ApiError(404, `No file '${input.reference.file_id.slice(0, 128)}'.`, {
        param: settings.fileParam ?? 'input_reference.file_id',
        code: 'file_not_found',
      });
    }
    return asImage(bytes, settings);
  }
  return undefined;
}
