/**
 * Upload names (issue 28): a filename that names no file (`.`, `..`, `/`) is a 400 saying so, not "missing file";
 * bidi overrides and other format characters are removed from the stored name and the download's header.
 */
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

/** A hand-written form, so the part's filename reaches the server exactly as given. */
function rawUpload(filename: string, content = 'hello') {
  const boundary = 'namesnames';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  return request(t.app)
    .post('/v1/files')
    .set('authorization', `Bearer ${t.key}`)
    .set('content-type', `multipart/form-data; boundary=${boundary}`)
    .send(body);
}

describe('filenames that name no file', () => {
  it.each(['.', '..', '/', 'dir/..', '\u202E'])(
    '%j is a 400 invalid_filename naming the filename',
    async (filename) => {
      const res = await rawUpload(filename);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.headers['x-request-id']).toMatch(/^req_/);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_filename', param: 'file' });
      expect(res.body.error.message).toMatch(/filename .* names no file/);
      const list = await request(t.app).get('/v1/files').set('authorization', `Bearer ${t.key}`);
      expect(list.body.data.filter((file: { bytes: number }) => file.bytes === 5)).toEqual([]);
    },
  );

  it('a path keeps its last segment', async () => {
    const res = await rawUpload('../../notes.txt');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.filename).toBe('notes.txt');
    await request(t.app).delete(`/v1/files/${res.body.id}`).set('authorization', `Bearer ${t.key}`);
  });
});

describe('format characters in names', () => {
  it('a right-to-left override is removed from the stored name and from Content-Disposition', async () => {
    const res = await rawUpload('invoice\u202Efdp.exe');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.filename).toBe('invoicefdp.exe');
    const download = await request(t.app)
      .get(`/v1/files/${res.body.id}/content`)
      .set('authorization', `Bearer ${t.key}`);
    expect(download.status).toBe(200);
    expect(download.headers['content-disposition']).toBe(
      `attachment; filename="invoicefdp.exe"; filename*=UTF-8''invoicefdp.exe`,
    );
  });

  it('isolates, marks and the other overrides are removed too', async () => {
    const res = await rawUpload('\u2066a\u2069\u200Eb\u200F\u202Ac\u202B\u202C\u202D\u2067\u2068.txt');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.filename).toBe('abc.txt');
  });
});
