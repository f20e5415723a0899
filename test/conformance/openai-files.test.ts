/**
 * File storage driven by the official `openai` SDK and by our own client (`client/`), against the real app
 * over HTTP: `files.create` from an `fs.createReadStream` and from `toFile`, `files.list` with
 * auto-pagination, `retrieve`, `content`, `delete`; the client's `uploadFile` from a Blob, a path and a
 * stream, and `downloadFile`.
 */
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { NotFoundError, toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/index.js';
import { sampleImage } from '../fakes/media-samples.js';
import { openAIServer } from './start-server.js';

const ctx = openAIServer();
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function tempFile(name: string, bytes: Uint8Array): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-files-')), name);
  writeFileSync(file, bytes);
  return file;
}

describe('the OpenAI SDK', () => {
  it('uploads from fs.createReadStream and from toFile, retrieves, downloads and deletes', async () => {
    const png = await sampleImage('png', 12, 12);
    const fromStream = await ctx.client.files.create({
      file: createReadStream(tempFile('whiteboard.png', png)),
      purpose: 'vision',
    });
    expect(fromStream).toMatchObject({
      object: 'file',
      bytes: png.byteLength,
      filename: 'whiteboard.png',
      purpose: 'vision',
      status: 'processed',
    });
    expect((fromStream as unknown as { content_type: string }).content_type).toBe('image/png');

    const text = Buffer.from('quarterly numbers: 1, 2, 3\n');
    const fromBytes = await ctx.client.files.create({
      file: await toFile(text, 'numbers.csv'),
      purpose: 'assistants',
      expires_after: { anchor: 'created_at', seconds: 7200 },
    });
    expect(fromBytes).toMatchObject({ bytes: text.length, filename: 'numbers.csv', purpose: 'assistants' });
    expect(fromBytes.expires_at).toBe(fromBytes.created_at + 7200);

    expect(await ctx.client.files.retrieve(fromStream.id)).toEqual(fromStream);
    const content = await ctx.client.files.content(fromBytes.id);
    expect(content.headers.get('content-type')).toBe('text/csv');
    expect(Buffer.from(await content.arrayBuffer())).toEqual(text);

    expect(await ctx.client.files.delete(fromBytes.id)).toEqual({ id: fromBytes.id, object: 'file', deleted: true });
    await expect(ctx.client.files.retrieve(fromBytes.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lists every file with auto-pagination across pages', async () => {
    const created: string[] = [];
    for (let i = 0; i < 7; i += 1) {
      created.push(
        (
          await ctx.client.files.create({
            file: await toFile(Buffer.from(`page item ${i}`), `item-${i}.txt`),
            purpose: 'user_data',
          })
        ).id,
      );
    }
    const seen: string[] = [];
    for await (const file of ctx.client.files.list({ purpose: 'user_data', limit: 3, order: 'asc' })) {
      seen.push(file.id);
    }
    expect(seen).toEqual(created);
  });
});

describe('the Omnigate client', () => {
  it('uploads a Blob, a path and a Node stream, and downloads the same bytes', async () => {
    const client = createClient({ baseUrl: ctx.started.baseURL, apiKey: ctx.started.key });
    const bytes = Buffer.from('é'.repeat(300_000)); // 600 KB of UTF-8 text
    const fromBlob = await client.uploadFile({ file: new Blob([bytes]), filename: 'blob.txt', purpose: 'user_data' });
    const fromPath = await client.uploadFile({ file: tempFile('on-disk.txt', bytes), purpose: 'user_data' });
    const fromStream = await client.uploadFile({
      file: Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]),
      filename: 'stream "quoted".txt',
      purpose: 'user_data',
    });
    const fromWebStream = await client.uploadFile({
      file: new Blob([bytes]).stream(),
      filename: 'web.txt',
      purpose: 'user_data',
      expiresAfterSeconds: 3600,
    });
    for (const stored of [fromBlob, fromPath, fromStream, fromWebStream]) {
      expect(stored).toMatchObject({ bytes: bytes.length, content_type: 'text/plain', sha256: sha256(bytes) });
      const download = await client.downloadFile(stored.id);
      expect(download.contentType).toBe('text/plain');
      // Compared by digest: toEqual walks 600,000 bytes one by one, and a loop held that long lets the in-process
      // server's keep-alive timer close the socket the client is about to reuse (ECONNRESET on the next call).
      expect(sha256(Buffer.from(download.data))).toBe(sha256(bytes));
    }
    expect([fromBlob.filename, fromPath.filename, fromStream.filename]).toEqual([
      'blob.txt',
      'on-disk.txt',
      'stream "quoted".txt',
    ]);
    expect(fromWebStream.expires_at).toBe(fromWebStream.created_at + 3600);
  });
});
