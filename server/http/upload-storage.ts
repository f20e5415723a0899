/**
 * How the contract validator reads multipart bodies (its `fileUploader`, which is multer). Most multipart
 * operations take small files (a video's `input_reference` image): those stay in memory as multer's own
 * memory storage would keep them (`file.buffer`), bounded by the JSON body limit. The operations listed in
 * `streamed` (`createFile`) take files of hundreds of MB: their parts are streamed to a staged blob as they
 * arrive, hashed and sniffed on the way, and never held whole.
 *
 * Why a multer storage engine rather than parsing those bodies with busboy in a route of our own: the
 * validator keeps checking the form's fields against the contract (a missing `purpose` is its 400, like any
 * other operation's), the multipart error mapping stays in one place (`multipart-error.ts`), and multer's
 * abort handling (a client gone mid-body, a size limit, a count limit) calls back into this engine to remove
 * what it began. Whatever path a request takes, a staged file that no handler committed is discarded when the
 * response closes, so a refused, failed or cut-off upload leaves nothing on disk.
 *
 * An engine can only fail a file with an Error, which the validator turns into a bare 500; the ApiError that
 * says why (413 with the limit, 429 for the file count) is kept per request for `uploadRefusal()`.
 */
import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { ApiError } from '../core/api-error.js';
import { createMediaSniffer } from '../core/sniff-media-type.js';
import { closePastBound } from './drain-early-answer.js';
import { filenameRefusal } from './upload-filename.js';
import type { BlobStore, StagedBlob } from '../storage/blob-store.js';
import type { OperationId } from './operation-types.js';

/** Multer's file object while an engine handles it. */
interface IncomingFile {
  fieldname: string;
  originalname?: string;
  mimetype?: string;
  stream: Readable;
  path?: string;
}

/** A file part of a streamed operation, as the handler finds it in `req.files`. */
export interface StreamedFile {
  fieldname: string;
  originalname?: string;
  staged: StagedBlob;
  /** Sniffed from the bytes and the original name. */
  mediaType: string;
  size: number;
}

/** The limit one streamed upload gets, decided before its first byte is read. */
export interface StreamedLimit {
  maxBytes: number;
  /** The error for a file past `maxBytes`. */
  tooLarge(): ApiError;
}

export interface UploadSettings {
  blobs: Pick<BlobStore, 'stage'>;
  /** The largest in-memory file (the JSON body limit). */
  maxBodyBytes: number;
  /** Operations whose files stream to disk, each with the limit for this request; throwing an ApiError refuses it. */
  streamed: Partial<Record<OperationId, (req: Request, res: Response) => Promise<StreamedLimit>>>;
  /** Blob id prefix of streamed files. */
  prefix: string;
  /** Operations whose files stay in memory under a limit of their own instead of the JSON body limit (audio to transcribe). */
  inMemory?: Partial<Record<OperationId, StreamedLimit>>;
}

type Callback = (error: Error | null, info?: object) => void;

const refusals = new WeakMap<object, ApiError>();

/** The ApiError an upload of this request was refused with, if one was. */
export function uploadRefusal(req: object): ApiError | undefined {
  return refusals.get(req);
}

function operationOf(req: Request): OperationId | undefined {
  return (req as { openapi?: { schema?: { operationId?: OperationId } } }).openapi?.schema?.operationId;
}

/** The validator's `fileUploader` options (multer's): limits per operation and the storage engine. */
export function uploadOptions(settings: UploadSettings) {
  const limitOf = (req: Request) => {
    const operation = operationOf(req);
    return operation ? settings.streamed[operation] : undefined;
  };
  const memoryLimitOf = (req: Request) => {
    const operation = operationOf(req);
    return operation ? settings.inMemory?.[operation] : undefined;
  };
  /** Streams the file to a staged blob within `limit`; a refusal is remembered for the error handler. */
  function stageWithin(
    req: Request,
    res: Response,
    file: IncomingFile,
    limit: StreamedLimit,
    callback: Callback,
  ): void {
    // multer removes a pending file on abort only if it has a path; the path is never used as one.
    file.path = 'staging';
    let staged: StagedBlob | undefined;
    const release = () => {
      if (!file.stream.readableEnded) {
        file.stream.destroy();
      }
      void staged?.discard();
    };
    res.once('close', release);
    const sniffer = createMediaSniffer();
    settings.blobs
      .stage(file.stream, {
        prefix: settings.prefix,
        observe: (chunk) => sniffer.update(chunk),
        check: (size) => {
          if (size > limit.maxBytes) {
            throw limit.tooLarge();
          }
        },
      })
      .then((result) => {
        staged = result;
        if (res.closed) {
          void result.discard();
        }
        const info: Omit<StreamedFile, 'fieldname' | 'originalname'> = {
          staged: result,
          mediaType: sniffer.result(file.originalname ?? ''),
          size: result.size,
        };
        callback(null, info);
      })
      .catch((error: unknown) => {
        if (error instanceof ApiError) {
          refusals.set(req, error);
          // multer reads the rest of a refused upload before the answer goes out: only so much of it.
          closePastBound(req);
        }
        callback(error instanceof Error ? error : new Error(String(error)));
      });
  }
  const storage = {
    _handleFile(req: Request, file: IncomingFile, callback: Callback) {
      const badName = filenameRefusal(file.originalname);
      if (badName) {
        refusals.set(req, badName);
        file.stream.resume();
        callback(badName);
        return;
      }
      const limitFor = limitOf(req);
      if (!limitFor) {
        const chunks: Buffer[] = [];
        const own = memoryLimitOf(req);
        let size = 0;
        let refused = false;
        file.stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (own && size > own.maxBytes) {
            if (!refused) {
              // Refused at the first byte past the limit: the rest is never held, and only so much of it read.
              refused = true;
              chunks.length = 0;
              const error = own.tooLarge();
              refusals.set(req, error);
              closePastBound(req);
              callback(error);
            }
            return;
          }
          chunks.push(chunk);
        });
        file.stream.on('error', (error: Error) => callback(error));
        file.stream.on('end', () => {
          if (refused) {
            return;
          }
          const buffer = Buffer.concat(chunks);
          callback(null, { buffer, size: buffer.length });
        });
        return;
      }
      const res = req.res as Response;
      // The limit reads the key's holdings from the database; the file's stream waits (paused) meanwhile.
      limitFor(req, res).then(
        (limit) => stageWithin(req, res, file, limit, callback),
        (error: unknown) => {
          if (error instanceof ApiError) {
            refusals.set(req, error);
          }
          file.stream.resume();
          callback(error instanceof Error ? error : new Error(String(error)));
        },
      );
    },
    _removeFile(
      _req: Request,
      file: Partial<IncomingFile> & { staged?: StagedBlob; buffer?: Buffer },
      callback: (error: Error | null) => void,
    ) {
      delete file.buffer;
      if (file.stream && !file.stream.readableEnded) {
        file.stream.destroy();
      }
      void (file.staged?.discard() ?? Promise.resolve()).then(() => callback(null), callback);
    },
  };
  return {
    storage,
    // Busboy's default reads a part's filename as latin1; the SDKs send UTF-8.
    defParamCharset: 'utf8',
    // The name as sent: busboy would otherwise turn `.`, `..` and `/` into no name, and the part into a plain
    // field, which the validator then calls a missing file. upload-filename.ts keeps the last segment itself.
    preservePath: true,
    limits: (req: Request) =>
      limitOf(req) || memoryLimitOf(req)
        ? // The size of a streamed file is checked by the engine, against a limit that can depend on the key.
          { fileSize: Infinity, files: 1, fields: 32 }
        : { fileSize: settings.maxBodyBytes, files: 4, fields: 32 },
  };
}
