/**
 * `/console`: the built console's files, served before authentication and the validator, with a strict CSP,
 * immutable caching for hashed assets, revalidation for the page, gzip when asked, and no usage record.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;

function fakeBuild(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-console-'));
  mkdirSync(path.join(directory, 'assets'));
  writeFileSync(
    path.join(directory, 'index.html'),
    '<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>',
  );
  writeFileSync(path.join(directory, 'assets', 'index-abc123.js'), SCRIPT);
  return directory;
}

describe('the web console files', () => {
  let test: TestApp | undefined;
  afterEach(async () => {
    await test?.services.close();
    test = undefined;
  });

  it('serves the page without a key, revalidated, under a CSP that allows no inline script', async () => {
    test = await createTestApp({ consoleDir: fakeBuild() });
    for (const url of ['/console', '/console/']) {
      const res = await request(test.app).get(url);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-svc-request-id']).toMatch(/^req_/);
      expect(res.text).toContain('/console/assets/index-abc123.js');
    }
  });

  it('caches hashed assets for a year and gzips them when the client accepts it', async () => {
    test = await createTestApp({ consoleDir: fakeBuild() });
    const plain = await request(test.app).get('/console/assets/index-abc123.js').set('accept-encoding', 'identity');
    expect(plain.status).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.text).toBe(SCRIPT);
    const zipped = await request(test.app).get('/console/assets/index-abc123.js').set('accept-encoding', 'gzip, br');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(Number(zipped.headers['content-length'])).toBeLessThan(SCRIPT.length / 10);
    expect(zipped.text).toBe(SCRIPT); // supertest inflates
    const head = await request(test.app).head('/console/assets/index-abc123.js').set('accept-encoding', 'identity');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(SCRIPT.length));
  });

  it('answers 404 for a name outside the build (no path escapes it) and 405 for another method', async () => {
    test = await createTestApp({ consoleDir: fakeBuild() });
    for (const url of [
      '/console/assets/missing.js',
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/usage',
    ]) {
      const res = await request(test.app).get(url);
      expect(res.status, url).toBe(404);
    }
    const post = await request(test.app).post('/console').send({});
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('says how to build it when it was not built', async () => {
    test = await createTestApp();
    const res = await request(test.app).get('/console');
    expect(res.status).toBe(404);
    expect(res.text).toContain('npm run build');
  });

  it('records no usage for a signed-in browser fetching the files', async () => {
    test = await createTestApp({ consoleDir: fakeBuild() });
    // An API call beside it is recorded, so the list below can see records at all.
    await request(test.app).get('/v1/models').set('authorization', `Bearer ${test.key}`).expect(200);
    await request(test.app).get('/console').set('authorization', `Bearer ${test.key}`).expect(200);
    await request(test.app)
      .get('/console/assets/index-abc123.js')
      .set('authorization', `Bearer ${test.key}`)
      .expect(200);
    const usage = await request(test.app).get('/v1/usage').set('authorization', `Bearer ${test.key}`);
    expect(usage.body.data.map((record: { operation: string }) => record.operation)).toEqual(['listModels']);
  });
});
