/**
 * `/v1/files`: file storage per API key. The upload's bytes were streamed to a staged blob while the validator
 * read the form (http/upload-storage.ts, with the limit calls/files/file-quota.ts `fileUploadLimit` sets); the handler checks the fields,
 * commits the blob, inserts the row under the key's quota and answers at once: the search index reads the file
 * afterwards (in a worker, within its caps), and the row's `indexing` state says how that went
 * (`indexing` → `indexed`, or `failed`/`not_indexed` with the reason), so nothing is silently left unindexed.
 * Every route sees only the caller's own files: another key's id is a 404 exactly like an unknown one.
 */
import type { Request, Response } from 'express';
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import { ApiError } from '../core/api-error.js';
import type { FileIndexState } from '../core/file-index.js';
import { contentDisposition } from '../http/content-disposition.js';
import { listPage } from '../http/list-page.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import type { StreamedFile } from '../http/upload-storage.js';
import { sendStoredBytes } from '../calls/send-stored-bytes.js';
import { quotaBytesError, quotaCountError } from '../calls/files/file-quota.js';
import { expiredFileSweep, expiryOf, removeFile } from '../calls/files/file-lifetime.js';
import { uploadedFilename } from '../http/upload-filename.js';
import { fileObject } from '../formats/openai-files/file-object.js';
import type { FileStore, StoredFile } from '../storage/file-store.js';

type FileOperations = 'listFiles' | 'createFile' | 'retrieveFile' | 'deleteFile' | 'downloadFile';
type FileDeps = Pick<AppDeps, 'files' | 'media' | 'logger' | 'now'>;

const NO_INDEX: FileIndexState = {
  status: 'not_indexed',
  code: 'no_index',
  reason: 'This server has no search index; files are stored but not searchable.',
};

function keyOf(res: Response): string {
  return scopeOf(res).key.id;
}

export function fileHandlers(deps: FileDeps): { [O in FileOperations]: OperationHandler<O> } {
  const now = deps.now ?? Date.now;
  const { store, index } = deps.files;
  const blobs = deps.media.blobs;
  const ownFile = async (res: Response, id: string): Promise<StoredFile> => {
    const file = await store.get(id, keyOf(res), Math.floor(now() / 1000));
    if (!file) {
      throw new ApiError(404, `No file '${id.slice(0, 128)}'. List yours with GET /v1/files.`, {
        param: 'id',
        code: 'file_not_found',
      });
    }
    return file;
  };
  const sweepExpired = expiredFileSweep({ store, index, blobs, logger: deps.logger, now });
  /**
   * Indexing runs after the upload has answered (the answer says `indexing`): a PDF that takes its whole time
   * budget holds no request. Extraction runs in a worker, never on the event loop; its outcome is written to
   * the row, and a failure to index never fails the upload.
   */
  const indexFile = (file: StoredFile): void => {
    if (!index || file.indexing?.status !== 'indexing') {
      return;
    }
    void index
      .add({
        id: file.id,
        keyId: file.keyId,
        filename: file.filename,
        mediaType: file.mediaType,
        bytes: file.bytes,
        open: async () => {
          const stream = await blobs.open(file.blobId);
          if (!stream) {
            throw new Error(`file ${file.id} has no bytes (deleted meanwhile)`);
          }
          return stream;
        },
      })
      .catch((error: unknown): FileIndexState => {
        deps.logger.warn(
          { err: error, file: file.id },
          'indexing an uploaded file failed; it is stored but not searchable',
        );
        return { status: 'failed', code: 'extraction_failed', reason: 'Indexing the file failed.' };
      })
      .then(async (state) => {
        // False when the file was deleted meanwhile: nothing to record.
        await store.setIndexing(file.id, state);
      })
      .catch((error: unknown) =>
        deps.logger.error({ err: error, file: file.id }, "recording a file's indexing state failed"),
      );
  };

  return {
    async createFile(req, res) {
      const body = req.body as unknown as Record<string, unknown> & { purpose: string };
      const upload = ((req as Request & { files?: StreamedFile[] }).files ?? []).find(
        (file) => file.fieldname === 'file' && file.staged,
      );
      if (!upload) {
        throw new ApiError(400, 'The form has no file part named `file` (send the file itself, not its name).', {
          param: 'file',
          code: 'missing_file',
        });
      }
      try {
        const createdMs = now();
        const created = Math.floor(createdMs / 1000);
        const expiresAt = expiryOf(body, created);
        if (upload.size === 0) {
          throw new ApiError(422, 'The file is empty.', { param: 'file', code: 'empty_file' });
        }
        const { quotaBytes, quotaCount } = deps.files;
        const blob = await upload.staged.commit({ mediaType: upload.mediaType, expiresAt, now: createdMs });
        let outcome: Awaited<ReturnType<FileStore['create']>>;
        try {
          outcome = await store.create(
            {
              keyId: keyOf(res),
              blobId: blob.id,
              filename: uploadedFilename(upload.originalname),
              purpose: body.purpose,
              bytes: upload.size,
              sha256: upload.staged.sha256,
              mediaType: upload.mediaType,
              createdAt: created,
              expiresAt,
              indexing: index
                ? index.admit({
                    mediaType: upload.mediaType,
                    filename: uploadedFilename(upload.originalname),
                    bytes: upload.size,
                  })
                : NO_INDEX,
            },
            { maxBytes: quotaBytes, maxCount: quotaCount },
            created,
          );
        } catch (error) {
          await blobs.delete(blob.id);
          throw error;
        }
        if ('refused' in outcome) {
          await blobs.delete(blob.id);
          throw outcome.refused === 'count'
            ? quotaCountError(quotaCount)
            : quotaBytesError(quotaBytes, outcome.holdings.bytes);
        }
        scopeOf(res).call.media = { bytes: upload.size };
        indexFile(outcome.file);
        sweepExpired();
        res.json(fileObject(outcome.file) satisfies ResponseBody<'createFile', 200>);
      } finally {
        // Whatever was refused above leaves no temporary file; after a commit this does nothing.
        await upload.staged.discard();
      }
    },

    async listFiles(req, res) {
      const { after, limit, order, purpose } = req.query;
      const page = await store.list({
        keyId: keyOf(res),
        purpose,
        after,
        limit: limit ?? 20,
        order: order ?? 'desc',
        now: Math.floor(now() / 1000),
      });
      sweepExpired();
      res.json(listPage(page.files.map(fileObject), page.hasMore) satisfies ResponseBody<'listFiles', 200>);
    },

    async retrieveFile(req, res) {
      res.json(fileObject(await ownFile(res, req.params.id)));
    },

    async deleteFile(req, res) {
      const file = await ownFile(res, req.params.id);
      const removed = await store.delete(file.id, file.keyId);
      if (!removed) {
        throw new ApiError(404, `No file '${file.id}'.`, { param: 'id', code: 'file_not_found' });
      }
      await removeFile(removed, blobs, index);
      res.json({ id: removed.id, object: 'file', deleted: true } satisfies ResponseBody<'deleteFile', 200>);
    },

    async downloadFile(req, res) {
      const file = await ownFile(res, req.params.id);
      await sendStoredBytes(req, res, blobs, file.blobId, {
        headers: {
          'Content-Disposition': contentDisposition(file.filename),
          // The bytes are the caller's own upload: a stored HTML file must not run as a page of this origin.
          'Content-Security-Policy': "default-src 'none'; sandbox",
          'Cache-Control': 'private, no-store',
        },
      });
    },
  };
}
