/**
 * The byte store contract, run against both implementations: a directory, and S3 on a real S3-compatible
 * server (s3rver) started on loopback. Puts stream; reads answer whole or by inclusive range; a delete and a
 * missing key read as undefined; a source that fails midway (before and after the first multipart part) leaves
 * nothing under its key nor anything else in the store.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type TestS3Server } from '../../../test/helpers/s3-server.js';
import type { ByteStore } from './byte-store.js';
import { createDirectoryByteStore } from './directory-byte-store.js';
import { createS3ByteStore } from './s3-byte-store.js';

/** `count` chunks of `chunkBytes`, chunk i filled with the byte i; then an error instead of the end when `fail`. */
function source(count: number, chunkBytes: number, fail?: Error): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent === count) {
        if (fail) {
          this.destroy(fail);
        } else {
          this.push(null);
        }
        return;
      }
      this.push(Buffer.alloc(chunkBytes, sent % 256));
      sent += 1;
    },
  });
}

async function read(store: ByteStore, key: string, range?: { start: number; end: number }) {
  const stream = await store.open(key, range);
  return stream ? await buffer(stream) : undefined;
}

interface Backend {
  store: ByteStore;
  /** Everything the store holds, temporaries included. */
  entries(): Promise<string[]>;
}

let s3: TestS3Server;
const cleanups: Array<() => unknown> = [];
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) {
    await cleanup();
  }
  await s3.close();
});

const backends: Record<string, () => Backend> = {
  directory() {
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-bytes-'));
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
    return { store: createDirectoryByteStore(directory), entries: async () => readdirSync(directory).sort() };
  },
  s3() {
    // Each test its own prefix, listed one level up: anything written beside it (a stray temporary) shows.
    const run = `run${cleanups.length}`;
    const store = createS3ByteStore(s3.location(`${run}/blobs`));
    cleanups.push(() => store.close());
    return { store, entries: () => s3.keys(`${run}/`) };
  },
};

describe.each(Object.keys(backends))('%s byte store', (kind) => {
  it('streams a put and reads it back whole and by inclusive ranges: first byte, middle, last byte, whole', async () => {
    const { store, entries } = backends[kind]!();
    const bytes = Buffer.from('0123456789abcdefghij');
    await store.put('file_AAAAAAAAAA', Readable.from([bytes.subarray(0, 7), bytes.subarray(7)]));
    expect(await read(store, 'file_AAAAAAAAAA')).toEqual(bytes);
    expect(await read(store, 'file_AAAAAAAAAA', { start: 0, end: 0 })).toEqual(Buffer.from('0'));
    expect(await read(store, 'file_AAAAAAAAAA', { start: 5, end: 12 })).toEqual(Buffer.from('56789abc'));
    expect(await read(store, 'file_AAAAAAAAAA', { start: 19, end: 19 })).toEqual(Buffer.from('j'));
    expect(await read(store, 'file_AAAAAAAAAA', { start: 0, end: 19 })).toEqual(bytes);
    // Bytes given whole (generated media) take the same path out.
    await store.put('media_BBBBBBBBBB', new Uint8Array([1, 2, 3]));
    expect(await read(store, 'media_BBBBBBBBBB', { start: 1, end: 2 })).toEqual(Buffer.from([2, 3]));
    expect((await entries()).length).toBe(2);
  });

  it('answers undefined for a missing key and after a delete; deleting twice is fine', async () => {
    const { store, entries } = backends[kind]!();
    expect(await store.open('file_missing000')).toBeUndefined();
    expect(await store.open('file_missing000', { start: 0, end: 3 })).toBeUndefined();
    await store.put('file_CCCCCCCCCC', new Uint8Array([7]));
    await store.delete('file_CCCCCCCCCC');
    expect(await store.open('file_CCCCCCCCCC')).toBeUndefined();
    await store.delete('file_CCCCCCCCCC');
    expect(await entries()).toEqual([]);
  });

  it('leaves nothing behind when the source fails, whether within one part or after multipart parts', async () => {
    const { store, entries } = backends[kind]!();
    const small = store.put('file_DDDDDDDDDD', source(3, 1024, new Error('client went away')));
    await expect(small).rejects.toThrow('client went away');
    // 10 MiB: past the S3 store's 8 MiB part, so a multipart upload has begun when the source fails.
    const large = store.put('file_EEEEEEEEEE', source(10, 1024 * 1024, new Error('cut off at 10 MiB')));
    await expect(large).rejects.toThrow('cut off at 10 MiB');
    expect(await store.open('file_DDDDDDDDDD')).toBeUndefined();
    expect(await store.open('file_EEEEEEEEEE')).toBeUndefined();
    expect(await entries()).toEqual([]);
  });

  it('streams a put of many parts and serves a range across a part boundary', async () => {
    const { store } = backends[kind]!();
    const MiB = 1024 * 1024;
    await store.put('file_FFFFFFFFFF', source(18, MiB));
    const across = await read(store, 'file_FFFFFFFFFF', { start: 8 * MiB - 2, end: 8 * MiB + 1 });
    expect(across).toEqual(Buffer.from([7, 7, 8, 8]));
    expect(await read(store, 'file_FFFFFFFFFF', { start: 18 * MiB - 1, end: 18 * MiB - 1 })).toEqual(Buffer.from([17]));
  });

  it('moves a local file in and removes it; refuses keys that could escape the store', async () => {
    const { store, entries } = backends[kind]!();
    const staging = mkdtempSync(path.join(tmpdir(), 'omnigate-staging-'));
    cleanups.push(() => rmSync(staging, { recursive: true, force: true }));
    const file = path.join(staging, '.file_GGGGGGGGGG.partial');
    writeFileSync(file, 'staged upload');
    await store.putFile('file_GGGGGGGGGG', file);
    expect(existsSync(file)).toBe(false);
    expect((await read(store, 'file_GGGGGGGGGG'))?.toString()).toBe('staged upload');
    for (const key of ['../escape', 'a/b', '', '.hidden']) {
      await expect(store.open(key)).rejects.toThrow('not a byte store key');
      await expect(store.put(key, new Uint8Array([1]))).rejects.toThrow('not a byte store key');
    }
    expect((await entries()).length).toBe(1);
  });
});
