/**
 * Bytes as files in one directory, each written to a temporary name and renamed into place, so that a reader
 * never sees a half-written file. The directory is the data directory's `blobs` by default, or a volume the
 * instances share (`OMNIGATE_BLOB_URL=file:///path`): rename is atomic on one file system, and a reader holds
 * the file open, so a delete by another instance mid-download does not cut the download.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync } from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { assertKey, type ByteStore } from './byte-store.js';
import { writeNewFile } from './write-new-file.js';

export interface DirectoryByteStore extends ByteStore {
  readonly directory: string;
}

export function createDirectoryByteStore(directory: string): DirectoryByteStore {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const fileOf = (key: string) => {
    assertKey(key);
    return path.join(directory, key);
  };
  // Dot-names are never keys (assertKey), and the random part keeps two instances' writes of one key apart.
  const temporaryOf = (key: string) => path.join(directory, `.${key}.${randomBytes(6).toString('hex')}.partial`);

  async function put(key: string, source: Readable | Uint8Array): Promise<void> {
    const target = fileOf(key);
    const temporary = temporaryOf(key);
    try {
      if (source instanceof Uint8Array) {
        await writeFile(temporary, source, { mode: 0o600, flag: 'wx' });
      } else {
        await writeNewFile(temporary, source);
      }
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  return {
    location: directory,
    directory,
    put,
    async putFile(key, file) {
      try {
        await rename(file, fileOf(key));
      } catch (error) {
        // Staged on another file system than the shared volume: copy, then drop the staged file.
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') {
          throw error;
        }
        await put(key, createReadStream(file));
        await rm(file, { force: true });
      }
    },
    async open(key, range) {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(fileOf(key), 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          return undefined;
        }
        throw error;
      }
      // The stream owns the handle and closes it at its end, on error and when destroyed.
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    },
    async delete(key) {
      await rm(fileOf(key), { force: true });
    },
    close() {},
  };
}
