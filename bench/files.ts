/**
 * Upload throughput of `POST /v1/files`: one 100 MiB file, generated as it is sent (never held whole), streamed
 * as a multipart body like `client.uploadFile({ file: stream })`. Reports MB/s from the first byte sent to the
 * stored record, and the client's check that the server's sha256 matches what was sent.
 * `benchFiles(base, key)`: `base` is the server's origin (`http://127.0.0.1:8080`), `key` an API key.
 */
import { createHash } from 'node:crypto';
import { multipartStream } from '../client/multipart-stream.js';

export interface FilesBenchResult {
  bytes: number;
  seconds: number;
  megabytesPerSecond: number;
  sha256Matches: boolean;
}

const CHUNK = 1024 * 1024;

/** `total` bytes in 1 MiB chunks, each different (so nothing downstream can take a shortcut), hashed as sent. */
async function* generated(total: number, hash: ReturnType<typeof createHash>): AsyncGenerator<Uint8Array> {
  const chunk = Buffer.alloc(CHUNK);
  for (let sent = 0, index = 0; sent < total; sent += CHUNK, index += 1) {
    chunk.fill(index % 251);
    chunk.writeUInt32BE(index, 0);
    const piece = chunk.subarray(0, Math.min(CHUNK, total - sent));
    hash.update(piece);
    yield Uint8Array.from(piece);
  }
}

export async function benchFiles(base: string, key: string, totalBytes = 100 * CHUNK): Promise<FilesBenchResult> {
  const hash = createHash('sha256');
  const { body, contentType } = multipartStream(
    { purpose: 'bench' },
    { field: 'file', filename: 'bench.bin', data: generated(totalBytes, hash) },
  );
  const started = performance.now();
  const response = await fetch(`${base}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body,
    duplex: 'half',
  } as RequestInit);
  const stored = (await response.json()) as {
    id?: string;
    bytes?: number;
    sha256?: string;
    error?: { message: string };
  };
  const seconds = (performance.now() - started) / 1000;
  if (!response.ok || !stored.id) {
    throw new Error(`upload failed: ${response.status} ${stored.error?.message ?? ''}`);
  }
  // Leave the store as it was.
  await fetch(`${base}/v1/files/${stored.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
  return {
    bytes: totalBytes,
    seconds,
    megabytesPerSecond: totalBytes / CHUNK / seconds,
    sha256Matches: stored.sha256 === hash.digest('hex') && stored.bytes === totalBytes,
  };
}
