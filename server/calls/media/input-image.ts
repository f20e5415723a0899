/**
 * The input image of a generation (a video's `input_reference`): an uploaded multipart file, a `data:` URL, an
 * http(s) URL (fetched through the SSRF guard: a caller's URL may not reach our network), or a file the same
 * key stored with `POST /v1/files` (another key's file id is unknown, as on every files route).
 * Whatever the source, the bytes must be a PNG, JPEG or WebP image, recognised by their magic, else 422, of
 * at most MAX_INPUT_PIXELS by its header, else 400 (before any worker decodes it).
 *
 * `planInputImage` does only what is instant: an upload or data URL is read and checked at once; a URL is checked
 * by its form (and an IP literal against the guard) and a file id by its row (exists for this key, within the
 * size cap, stored as an image), and their bytes come from `load`, which a video task runs after its 202.
 */
import { ApiError } from '../../core/api-error.js';
import { checkInputPixels } from '../../core/input-pixels.js';
import { decodeBase64 } from '../../engines/body/large-base64.js';
import type { GeneratedMedia } from '../../core/models.js';
import { readImageHeader } from '../../providers/upstream/image-header.js';
import { createSafeFetcher, type SafeFetchSettings, urlRefusal } from '../../providers/upstream/safe-fetch.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { FileStore } from '../../storage/file-store.js';
import { findStoredFile, type FoundFile } from '../files/read-stored-file.js';

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
  /** Tests only: lets the guarded fetch reach a loopback server (see SafeFetchSettings.blockedReason). */
  blockedReason?: SafeFetchSettings['blockedReason'];
}

function notAnImage(settings: InputImageSettings): ApiError {
  const param = settings.param ?? 'input_reference';
  return new ApiError(422, `${param} must be a PNG, JPEG${settings.gif ? ', GIF' : ''} or WebP image.`, {
    param,
    code: 'invalid_image',
  });
}

function acceptedType(mediaType: string | undefined, settings: InputImageSettings): boolean {
  return mediaType !== undefined && (ACCEPTED.has(mediaType) || (settings.gif === true && mediaType === 'image/gif'));
}

function asImage(bytes: Uint8Array, settings: InputImageSettings): GeneratedMedia {
  const header = readImageHeader(bytes);
  const param = settings.param ?? 'input_reference';
  if (!header || !acceptedType(header.mediaType, settings)) {
    throw notAnImage(settings);
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
  return unusableUrl(urlParam, refused, reason, error);
}

function unusableUrl(urlParam: string, refused: boolean, reason: string, cause?: unknown): ApiError {
  return new ApiError(
    422,
    `${urlParam} could not be used: ${refused ? 'the gateway refuses to fetch it' : 'fetching it failed'} (${reason}).`,
    { param: urlParam, code: refused ? 'image_url_refused' : 'image_url_unreachable', cause },
  );
}

/** The caller's own stored files as input images (`storedFile` of planInputImage), capped in size. */
export function storedImageFiles(
  deps: { store: FileStore; blobs: BlobStore },
  keyId: string,
  options: { param: string; nowSeconds: number },
): (id: string) => Promise<FoundFile | undefined> {
  return (id) => findStoredFile(deps, keyId, id, { maxBytes: MAX_INPUT_FILE_BYTES, ...options });
}

export interface InputImageInput {
  upload?: UploadedFile;
  reference?: { image_url?: string; file_id?: string };
  /** The caller's own stored file by its row, undefined when the key has no such file. */
  storedFile?: (id: string) => Promise<FoundFile | undefined>;
}

/** The input image as checked at once: in hand, or to be loaded (fetched or read) and checked then. */
export type PlannedInputImage = { image: GeneratedMedia } | { load: (signal: AbortSignal) => Promise<GeneratedMedia> };

export async function planInputImage(
  input: InputImageInput,
  settings: InputImageSettings = {},
): Promise<PlannedInputImage | undefined> {
  const urlParam = settings.urlParam ?? 'input_reference.image_url';
  if (input.upload) {
    return { image: asImage(new Uint8Array(input.upload.buffer), settings) };
  }
  const url = input.reference?.image_url;
  if (url?.startsWith('data:')) {
    const comma = url.indexOf(',');
    if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) {
      throw new ApiError(400, `A data URL in ${urlParam} must be base64 (\`data:image/png;base64,…\`).`, {
        param: urlParam,
      });
    }
    return { image: asImage(await decodeBase64(url.slice(comma + 1)), settings) };
  }
  if (url) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw unusableUrl(urlParam, true, 'not a URL');
    }
    const refusal = urlRefusal(parsed, settings.blockedReason);
    if (refusal) {
      throw unusableUrl(urlParam, true, refusal);
    }
    return { load: (signal) => fetchImage(url, urlParam, signal, settings) };
  }
  const fileId = input.reference?.file_id;
  if (fileId !== undefined) {
    const missing = () =>
      new ApiError(404, `No file '${fileId.slice(0, 128)}'.`, {
        param: settings.fileParam ?? 'input_reference.file_id',
        code: 'file_not_found',
      });
    const file = await input.storedFile?.(fileId);
    if (!file) {
      throw missing();
    }
    // The row's type was sniffed from the bytes at upload: a stored non-image is refused without reading it.
    if (!acceptedType(file.mediaType, settings)) {
      throw notAnImage(settings);
    }
    return {
      load: async () => {
        const bytes = await file.read();
        if (!bytes) {
          throw missing();
        }
        return asImage(bytes, settings);
      },
    };
  }
  return undefined;
}

async function fetchImage(
  url: string,
  urlParam: string,
  signal: AbortSignal,
  settings: InputImageSettings,
): Promise<GeneratedMedia> {
  const fetcher = createSafeFetcher({
    provider: settings.param ?? 'input_reference',
    timeoutMs: FETCH_TIMEOUT_MS,
    resolve: settings.resolve,
    blockedReason: settings.blockedReason,
  });
  let bytes: Uint8Array;
  try {
    bytes = (await fetcher.fetch(url, signal)).bytes;
  } catch (error) {
    throw callerUrlError(error, urlParam, signal);
  } finally {
    await fetcher.close();
  }
  return asImage(bytes, settings);
}

/** The input image read whole now, for a caller that answers only once it has it. */
export async function readInputImage(
  input: InputImageInput & { signal: AbortSignal },
  settings: InputImageSettings = {},
): Promise<GeneratedMedia | undefined> {
  const planned = await planInputImage(input, settings);
  return planned && ('image' in planned ? planned.image : await planned.load(input.signal));
}
