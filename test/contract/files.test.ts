/**
 * File storage through the HTTP contract: uploads (multipart like the SDKs) answer the stored record with
 * bytes, sha256 and a type sniffed from the bytes; list pages with cursor and purpose; downloads stream the
 * exact bytes with Content-Disposition and byte ranges; delete removes row, bytes and index entry. Another
 * key's file is a 404 like an unknown id; size limits and quotas are 413/429; an upload cut off mid-body and
 * every path trick leave nothing behind.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileIndex, IndexableFile } from '../../server/core/file-index.js';
import { readInputImage } from '../../server/calls/media/input-image.js';
import { findStoredFile } from '../../server/calls/files/read-stored-file.js';
import { contentDisposition } from '../../server/http/content-disposition.js';
import { sampleImage } from '../fakes/media-samples.js';
import { expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const auth = (key: string) => ({ authorization: `Bearer ${key}` });

function binary(req: request.Test) {
  return req.buffer(true).parse((response, callback) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => callback(null, Buffer.concat(chunks)));
  });
}

function upload(
  made: TestApp,
  bytes: Uint8Array,
  filename: string,
  options: { purpose?: string; contentType?: string; key?: string; fields?: Record<string, string> } = {},
) {
  const req = request(made.app)
    .post('/v1/files')
    .set(auth(options.key ?? made.key));
  if (options.purpose !== null) {
    req.field('purpose', options.purpose ?? 'assistants');
  }
  for (const [name, value] of Object.entries(options.fields ?? {})) {
    req.field(name, value);
  }
  return req.attach('file', Buffer.from(bytes), {
    filename,
    contentType: options.contentType ?? 'application/octet-stream',
  });
}

/** A hand-written form, so the part's filename reaches the server exactly as given. */
function rawUpload(made: TestApp, filename: string, content: string) {
  const boundary = 'rawrawraw';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  return request(made.app)
    .post('/v1/files')
    .set(auth(made.key))
    .set('content-type', `multipart/form-data; boundary=${boundary}`)
    .send(body);
}

/** Everything in the blob directory: committed blobs and any temporary `.partial` file. */
function blobFiles(made: TestApp): string[] {
  return readdirSync(made.blobDirectory);
}

function rows(made: TestApp): { files: number; blobs: number } {
  return {
    files: (made.db.prepare('SELECT COUNT(*) AS n FROM files').get() as { n: number }).n,
    blobs: (made.db.prepare('SELECT COUNT(*) AS n FROM blobs').get() as { n: number }).n,
  };
}

async function settle(check: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('POST /v1/files', () => {
  it('stores the upload and answers its record: bytes, sha256, the filename, a type sniffed from the bytes', async () => {
    const made = await createTestApp();
    const png = await sampleImage('png', 16, 8);
    const res = await upload(made, png, 'picture.txt', { contentType: 'text/plain', purpose: 'vision' });
    expect(res.status).toBe(200);
    expectRequestId(res);
    assertMatchesSchema('FileObject', res.body);
    expect(res.body).toMatchObject({
      object: 'file',
      bytes: png.byteLength,
      filename: 'picture.txt',
      purpose: 'vision',
      status: 'processed',
      status_details: null,
      expires_at: null,
      content_type: 'image/png',
      sha256: sha256(png),
    });
    expect(res.body.id).toMatch(/^file-[0-9a-f]{32}$/);
    const content = await binary(request(made.app).get(`/v1/files/${res.body.id}/content`).set(auth(made.key)));
    expect(content.status).toBe(200);
    expect(content.headers['content-type']).toBe('image/png');
    expect(Buffer.compare(content.body as Buffer, Buffer.from(png))).toBe(0);
  });

  it.each([
    ['a PDF named .bin', Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj\n'), 'report.bin', 'application/pdf'],
    ['a JPEG', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]), 'photo', 'image/jpeg'],
    ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), 'anim.png', 'image/gif'],
    ['a WebP', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')]), 'x.jpg', 'image/webp'],
    ['a ZIP', Buffer.from([0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0]), 'archive.zip', 'application/zip'],
    [
      'a DOCX (a ZIP by its extension)',
      Buffer.from([0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0]),
      'letter.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    ],
    ['UTF-8 markdown', Buffer.from('# Überschrift\n\nGrüße, 日本語 ✓\n'), 'notes.md', 'text/markdown'],
    ['UTF-8 CSV', Buffer.from('a,b\n1,2\n'), 'table.csv', 'text/csv'],
    ['JSON', Buffer.from('{"a": [1, 2]}'), 'data.json', 'application/json'],
    ['HTML', Buffer.from('<!doctype html><p>hi</p>'), 'page.html', 'text/html'],
    ['UTF-8 text with an unknown extension', Buffer.from('plain words'), 'README', 'text/plain'],
    [
      'bytes that are not UTF-8, named .txt',
      Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x00, 0x41]),
      'fake.txt',
      'application/octet-stream',
    ],
  ])('sniffs %s, whatever the client claims', async (_name, bytes, filename, expected) => {
    const made = await createTestApp();
    const res = await upload(made, bytes, filename, { contentType: 'text/html' });
    expect(res.status).toBe(200);
    expect(res.body.content_type).toBe(expected);
  });

  it('judges UTF-8 across chunk boundaries: a long text with multi-byte characters stays text', async () => {
    const made = await createTestApp();
    const text = Buffer.from('é日本語✓🙂'.repeat(40_000)); // ~ 600 KB: many chunks, characters split between them
    const res = await upload(made, text, 'long.txt');
    expect(res.body.content_type).toBe('text/plain');
    expect(res.body.sha256).toBe(sha256(text));
  });

  it('keeps the expiry the SDKs send as two form fields; refuses one out of range with its param', async () => {
    const made = await createTestApp();
    const ok = await upload(made, Buffer.from('hello'), 'a.txt', {
      fields: { 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '3600' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.expires_at).toBe(ok.body.created_at + 3600);
    const bad = await upload(made, Buffer.from('hello'), 'a.txt', {
      fields: { 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '60' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('expires_after.seconds');
    expect(blobFiles(made)).toHaveLength(1);
  });

  it('refuses a form without purpose (400), without a file part (400), an empty file (422) and a JSON body (415)', async () => {
    const made = await createTestApp();
    const noPurpose = await request(made.app)
      .post('/v1/files')
      .set(auth(made.key))
      .attach('file', Buffer.from('x'), 'a.txt');
    expect(noPurpose.status).toBe(400);
    expectRequestId(noPurpose);
    const noFile = await request(made.app)
      .post('/v1/files')
      .set(auth(made.key))
      .field('purpose', 'assistants')
      .field('file', 'a.txt');
    expect(noFile.status).toBe(400);
    expect(noFile.body.error.param).toBe('file');
    const empty = await upload(made, new Uint8Array(0), 'empty.txt');
    expect(empty.status).toBe(422);
    expect(empty.body.error.code).toBe('empty_file');
    const json = await request(made.app)
      .post('/v1/files')
      .set(auth(made.key))
      .send({ purpose: 'assistants', file: 'x' });
    expect(json.status).toBe(415);
    expect(blobFiles(made)).toEqual([]);
    expect(rows(made)).toEqual({ files: 0, blobs: 0 });
  });

  it('answers 413 past OMNIGATE_MAX_FILE_BYTES, naming the limit, and keeps nothing', async () => {
    const made = await createTestApp({ files: { maxFileBytes: 1000 } });
    const res = await upload(made, Buffer.alloc(1001, 0x61), 'big.txt');
    expect(res.status).toBe(413);
    expectRequestId(res);
    expect(res.body.error).toMatchObject({ type: 'request_too_large', code: 'file_too_large', param: 'file' });
    expect(res.body.error.message).toContain('OMNIGATE_MAX_FILE_BYTES');
    const exact = await upload(made, Buffer.alloc(1000, 0x61), 'fits.txt');
    expect(exact.status).toBe(200);
    await settle(() => blobFiles(made).length === 1);
    expect(blobFiles(made)).toHaveLength(1);
    expect(rows(made)).toEqual({ files: 1, blobs: 1 });
  });

  it('takes files larger than the JSON body limit (a separate limit)', async () => {
    const made = await createTestApp({ maxBodyBytes: 2048 });
    const res = await upload(made, Buffer.alloc(100_000, 0x62), 'b.txt');
    expect(res.status).toBe(200);
    expect(res.body.bytes).toBe(100_000);
  });

  it('holds each key to its quotas: bytes past the quota are 413, one file past the count is 429 without retry', async () => {
    const made = await createTestApp({ files: { quotaBytes: 1500, quotaCount: 2 } });
    expect((await upload(made, Buffer.alloc(1000, 1), 'a.bin')).status).toBe(200);
    const tooMuch = await upload(made, Buffer.alloc(600, 1), 'b.bin');
    expect(tooMuch.status).toBe(413);
    expect(tooMuch.body.error.code).toBe('file_quota_bytes_exceeded');
    expect(tooMuch.body.error.message).toMatch(/quota of 1500 bytes \(1000 bytes used\)/);
    expect((await upload(made, Buffer.alloc(400, 1), 'c.bin')).status).toBe(200);
    const tooMany = await upload(made, Buffer.alloc(1, 1), 'd.bin');
    expect(tooMany.status).toBe(429);
    expect(tooMany.headers['x-should-retry']).toBe('false');
    expect(tooMany.body.error.code).toBe('file_quota_count_exceeded');
    // Another key has its own quota.
    const other = (await made.keys.create({ name: 'other' })).key;
    expect((await upload(made, Buffer.alloc(1000, 1), 'e.bin', { key: other })).status).toBe(200);
    await settle(() => blobFiles(made).length === 3);
    expect(blobFiles(made)).toHaveLength(3);
  });

  it("records the bytes uploaded on the call's usage record", async () => {
    const made = await createTestApp();
    const res = await upload(made, Buffer.alloc(4321, 0x61), 'u.txt');
    const id = expectRequestId(res);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const usage = await request(made.app).get('/v1/usage').query({ request_id: id }).set(auth(made.key));
    expect(usage.body.data[0]).toMatchObject({ operation: 'createFile', media: { bytes: 4321 }, status: 200 });
  });

  it('tells the search index after the upload, off the request path; a failing index fails nothing and is recorded on the file', async () => {
    const added: Array<{ file: IndexableFile; text: string }> = [];
    const removed: string[] = [];
    const index: FileIndex = {
      admit: () => ({ status: 'indexing' }),
      async add(file) {
        const chunks: Buffer[] = [];
        for await (const chunk of await file.open()) {
          chunks.push(chunk as Buffer);
        }
        added.push({ file, text: Buffer.concat(chunks).toString('utf8') });
        if (file.filename === 'boom.txt') {
          throw new Error('index is broken');
        }
        return { status: 'indexed' };
      },
      async remove(fileId) {
        removed.push(fileId);
      },
    };
    const made = await createTestApp({ files: { index } });
    const res = await upload(made, Buffer.from('searchable words'), 'notes.txt');
    await settle(() => added.length === 1);
    expect(added[0].file).toMatchObject({ id: res.body.id, filename: 'notes.txt', mediaType: 'text/plain', bytes: 16 });
    expect(added[0].text).toBe('searchable words');
    const boom = await upload(made, Buffer.from('x'), 'boom.txt');
    expect(boom.status).toBe(200);
    await settle(() => made.logs.some((line) => line.msg?.toString().startsWith('indexing an uploaded file failed')));
    expect(made.logs.some((line) => line.msg?.toString().startsWith('indexing an uploaded file failed'))).toBe(true);
    expect(boom.body.indexing.status).toBe('indexing');
    const boomAfter = await request(made.app).get(`/v1/files/${boom.body.id}`).set(auth(made.key));
    expect(boomAfter.body.indexing).toEqual({
      status: 'failed',
      code: 'extraction_failed',
      reason: 'Indexing the file failed.',
    });
    expect((await request(made.app).get(`/v1/files/${res.body.id}`).set(auth(made.key))).body.indexing).toEqual({
      status: 'indexed',
      reason: null,
      code: null,
    });
    const deleted = await request(made.app).delete(`/v1/files/${res.body.id}`).set(auth(made.key));
    expect(deleted.status).toBe(200);
    expect(removed).toEqual([res.body.id]);
  });

  it('leaves nothing behind when the client cuts the upload off mid-body', async () => {
    const made = await createTestApp();
    const server = made.app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const boundary = 'cutcutcut';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${made.key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + 10_000_000}\r\n\r\n${head}`,
    );
    for (let i = 0; i < 20; i += 1) {
      socket.write(Buffer.alloc(64 * 1024, 0x41));
    }
    // The staged file exists while the body arrives…
    await settle(() => blobFiles(made).some((name) => name.endsWith('.partial')));
    expect(blobFiles(made).some((name) => name.endsWith('.partial'))).toBe(true);
    socket.destroy();
    // …and is gone once the connection is.
    await settle(() => blobFiles(made).length === 0);
    expect(blobFiles(made)).toEqual([]);
    expect(rows(made)).toEqual({ files: 0, blobs: 0 });
  });
});

describe('GET /v1/files', () => {
  it("pages the caller's files with after, limit, order and purpose; another key's files are never listed", async () => {
    const made = await createTestApp();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push(
        (await upload(made, Buffer.from(`file ${i}`), `f${i}.txt`, { purpose: i % 2 === 0 ? 'assistants' : 'vision' }))
          .body.id as string,
      );
    }
    const other = (await made.keys.create({ name: 'other' })).key;
    await upload(made, Buffer.from('theirs'), 'theirs.txt', { key: other });

    const first = await request(made.app).get('/v1/files').query({ limit: 2 }).set(auth(made.key));
    expect(first.status).toBe(200);
    assertMatchesSchema('FileList', first.body);
    expect(first.body.data.map((file: { id: string }) => file.id)).toEqual([ids[4], ids[3]]);
    expect(first.body).toMatchObject({ has_more: true, first_id: ids[4], last_id: ids[3] });
    const next = await request(made.app)
      .get('/v1/files')
      .query({ limit: 2, after: first.body.last_id })
      .set(auth(made.key));
    expect(next.body.data.map((file: { id: string }) => file.id)).toEqual([ids[2], ids[1]]);
    const last = await request(made.app)
      .get('/v1/files')
      .query({ limit: 2, after: next.body.last_id })
      .set(auth(made.key));
    expect(last.body).toMatchObject({ has_more: false });
    expect(last.body.data.map((file: { id: string }) => file.id)).toEqual([ids[0]]);

    const ascending = await request(made.app).get('/v1/files').query({ order: 'asc' }).set(auth(made.key));
    expect(ascending.body.data.map((file: { id: string }) => file.id)).toEqual(ids);
    const vision = await request(made.app).get('/v1/files').query({ purpose: 'vision' }).set(auth(made.key));
    expect(vision.body.data.map((file: { id: string }) => file.id)).toEqual([ids[3], ids[1]]);
    const theirs = await request(made.app).get('/v1/files').set(auth(other));
    expect(theirs.body.data).toHaveLength(1);
    // A cursor from another key continues nothing.
    const foreignCursor = await request(made.app)
      .get('/v1/files')
      .query({ after: theirs.body.data[0].id })
      .set(auth(made.key));
    expect(foreignCursor.body).toMatchObject({ data: [], has_more: false });
  });

  it('does not list or serve an expired file', async () => {
    let clock = Date.UTC(2025, 0, 1);
    const made = await createTestApp({ now: () => clock });
    const res = await upload(made, Buffer.from('short-lived'), 'a.txt', {
      fields: { 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '3600' },
    });
    clock += 3601 * 1000;
    expect((await request(made.app).get(`/v1/files/${res.body.id}`).set(auth(made.key))).status).toBe(404);
    expect((await request(made.app).get('/v1/files').set(auth(made.key))).body.data).toEqual([]);
    await settle(() => rows(made).files === 0);
    expect(rows(made).files).toBe(0);
  });
});

describe('one file: retrieve, content, delete', () => {
  it("answers another key's file exactly like an unknown id, on every route", async () => {
    const made = await createTestApp();
    const mine = (await upload(made, Buffer.from('secret'), 'secret.txt')).body.id as string;
    const other = (await made.keys.create({ name: 'other' })).key;
    const unknown = `file-${'0'.repeat(32)}`;
    for (const [method, suffix] of [
      ['get', ''],
      ['get', '/content'],
      ['delete', ''],
    ] as const) {
      const theirs = await request(made.app)[method](`/v1/files/${mine}${suffix}`).set(auth(other));
      const missing = await request(made.app)[method](`/v1/files/${unknown}${suffix}`).set(auth(other));
      expect(theirs.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(JSON.stringify(theirs.body).replaceAll(mine, 'ID')).toBe(
        JSON.stringify(missing.body).replaceAll(unknown, 'ID'),
      );
      expect(theirs.body.error.code).toBe('file_not_found');
    }
    // Still there for its owner.
    expect((await request(made.app).get(`/v1/files/${mine}`).set(auth(made.key))).status).toBe(200);
  });

  it('retrieves the record, then delete removes record, bytes and row', async () => {
    const made = await createTestApp();
    const created = (await upload(made, Buffer.from('bye'), 'bye.txt')).body;
    const got = await request(made.app).get(`/v1/files/${created.id}`).set(auth(made.key));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
    expect(blobFiles(made)).toHaveLength(1);
    const deleted = await request(made.app).delete(`/v1/files/${created.id}`).set(auth(made.key));
    expect(deleted.status).toBe(200);
    assertMatchesSchema('FileDeleted', deleted.body);
    expect(deleted.body).toEqual({ id: created.id, object: 'file', deleted: true });
    expect(blobFiles(made)).toEqual([]);
    expect(rows(made)).toEqual({ files: 0, blobs: 0 });
    expect((await request(made.app).get(`/v1/files/${created.id}/content`).set(auth(made.key))).status).toBe(404);
    expect((await request(made.app).delete(`/v1/files/${created.id}`).set(auth(made.key))).status).toBe(404);
  });

  it('serves byte ranges: 206 with Content-Range, 416 outside the file', async () => {
    const made = await createTestApp();
    const bytes = Buffer.from('0123456789abcdef');
    const id = (await upload(made, bytes, 'digits.txt')).body.id as string;
    const part = await binary(
      request(made.app).get(`/v1/files/${id}/content`).set(auth(made.key)).set('range', 'bytes=2-5'),
    );
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 2-5/16');
    expect(part.headers['accept-ranges']).toBe('bytes');
    expect((part.body as Buffer).toString()).toBe('2345');
    const tail = await binary(
      request(made.app).get(`/v1/files/${id}/content`).set(auth(made.key)).set('range', 'bytes=-3'),
    );
    expect((tail.body as Buffer).toString()).toBe('def');
    const outside = await request(made.app)
      .get(`/v1/files/${id}/content`)
      .set(auth(made.key))
      .set('range', 'bytes=100-200');
    expect(outside.status).toBe(416);
    expect(outside.headers['content-range']).toBe('bytes */16');
  });

  it('names the file in Content-Disposition safely: ASCII fallback, RFC 5987 UTF-8, no header injection', async () => {
    const made = await createTestApp();
    const unicode = await upload(made, Buffer.from('x'), 'résumé "final" 100%.txt');
    const res = await request(made.app).get(`/v1/files/${unicode.body.id}/content`).set(auth(made.key));
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="r_sum_ _final_ 100_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22%20100%25.txt`,
    );
    expect(decodeURIComponent(res.headers['content-disposition'].split("''")[1])).toBe('résumé "final" 100%.txt');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain('sandbox');

    // multer turns the WHATWG escapes %0D%0A of a part's filename back into CR LF: they must not reach a header.
    const injected = await rawUpload(made, 'a%0D%0AX-Injected: yes%0D%0A.txt', 'hello');
    expect(injected.status).toBe(200);
    expect(injected.body.filename).toBe('aX-Injected: yes.txt');
    const download = await request(made.app).get(`/v1/files/${injected.body.id}/content`).set(auth(made.key));
    expect(download.headers['x-injected']).toBeUndefined();
    expect(download.headers['content-disposition']).toBe(
      `attachment; filename="aX-Injected: yes.txt"; filename*=UTF-8''aX-Injected%3A%20yes.txt`,
    );
    expect(contentDisposition('\r\n')).toBe(`attachment; filename="file"; filename*=UTF-8''file`);
  });

  it('never lets an id or a filename address anything outside the store', async () => {
    const made = await createTestApp();
    // Raw forms: form-data (under supertest) would strip the path itself, and this is about what the server does.
    for (const [sent, kept] of [
      ['../../../../tmp/evil.txt', 'evil.txt'],
      ['..\\..\\windows\\evil2.txt', 'evil2.txt'],
      ['/etc/passwd', 'passwd'],
    ]) {
      const res = await rawUpload(made, sent, 'evil');
      expect([sent, res.status]).toEqual([sent, 200]);
      expect(res.body.filename).toBe(kept);
    }
    // A name that is all path has no file name left: the part is no file, and the form is refused.
    for (const sent of ['..', 'sub/', '.']) {
      const res = await rawUpload(made, sent, 'evil');
      expect([sent, res.status]).toEqual([sent, 400]);
    }
    expect(rows(made).files).toBe(3);
    // Only blob ids are file names in the store.
    expect(blobFiles(made).every((name) => /^upload_[0-9A-Za-z]{26}$/.test(name))).toBe(true);
    for (const path of [
      '/v1/files/..%2F..%2F..%2Fetc%2Fpasswd',
      '/v1/files/..%2F..%2F..%2Fetc%2Fpasswd/content',
      `/v1/files/${encodeURIComponent(`../${blobFiles(made)[0]}`)}/content`,
      `/v1/files/${blobFiles(made)[0]}/content`,
      '/v1/files/%2e%2e/content',
      "/v1/files/file-1' OR '1'='1/content",
    ]) {
      const answer = await request(made.app).get(path).set(auth(made.key));
      expect([400, 404]).toContain(answer.status);
      expect(answer.body.error).toBeDefined();
    }
  });
});

describe('a stored image as a video input (input_reference.file_id)', () => {
  it("reads the caller's own image; another key's id is unknown; a stored non-image is 422", async () => {
    const made = await createTestApp();
    const png = await sampleImage('png', 8, 8);
    const id = (await upload(made, png, 'start.png')).body.id as string;
    const text = (await upload(made, Buffer.from('not an image'), 'a.txt')).body.id as string;
    const ownerId = (await made.keys.list()).find((record) => record.name === 'test')!.id;
    const other = await made.keys.create({ name: 'other' });
    const storedFile = (keyId: string) => (fileId: string) =>
      findStoredFile({ store: made.files, blobs: made.blobs }, keyId, fileId, {
        maxBytes: 1_000_000,
        param: 'input_reference.file_id',
        nowSeconds: Math.floor(Date.now() / 1000),
      });
    const signal = new AbortController().signal;
    const image = await readInputImage({ reference: { file_id: id }, storedFile: storedFile(ownerId), signal });
    expect(image?.mediaType).toBe('image/png');
    expect(Buffer.compare(Buffer.from(image!.data), Buffer.from(png))).toBe(0);
    await expect(
      readInputImage({ reference: { file_id: id }, storedFile: storedFile(other.record.id), signal }),
    ).rejects.toMatchObject({ status: 404, code: 'file_not_found' });
    await expect(
      readInputImage({ reference: { file_id: text }, storedFile: storedFile(ownerId), signal }),
    ).rejects.toMatchObject({ status: 422 });
  });
});
