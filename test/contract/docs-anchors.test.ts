/**
 * Redoc 2's deep links on the Redoc page of today: the anchor script injected into the built page rewrites
 * `#tag/…/operation/…`, `#operation/…`, `#tag/…` and `#section/…` to the hash paths the page routes by (anything
 * else it shows as its own "404 No page at this address"), and `/docs/…` paths, which the server used to answer
 * 401/404, redirect to `/docs` with the path as the hash.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { addLegacyAnchors, legacyAnchorScript } from '../../scripts/docs-anchors.mjs';
import { createTestApp } from '../helpers/create-test-app.js';
import { ROOT } from '../helpers/spawn-server.js';

const SPEC_PATH = path.join(ROOT, 'openapi/api.yaml');
const script = legacyAnchorScript(parse(readFileSync(SPEC_PATH, 'utf8')));
const code = /<script>([\s\S]*)<\/script>/.exec(script)![1]!;

/** Runs the page's anchor script as a browser would on a page opened at `hash`; the hash it replaces it with. */
function rewrite(hash: string): string | undefined {
  let replaced: string | undefined;
  runInNewContext(code, { window: { location: { hash, replace: (to: string) => (replaced = to) } } });
  return replaced;
}

describe('the anchor script', () => {
  it.each([
    ['#tag/Models/operation/listModels', '#/models/listmodels'],
    ['#tag/Videos/operation/retrieveVideo', '#/videos/retrievevideo'],
    ['#operation/createChatCompletion', '#/chat/createchatcompletion'],
    ['#operation/mcpPost', '#/mcp/mcppost'],
    ['#tag/Extensions', '#/extensions'],
    ['#section/Request-ids', '#/section/request-ids'],
    ['#section/Errors', '#/section/errors'],
    ['#models/listmodels', '#/models/listmodels'],
  ])('maps %s to %s', (from, to) => {
    expect(rewrite(from)).toBe(to);
  });

  it.each(['', '#', '#/models/listmodels', '#/section/errors'])('leaves %j alone', (hash) => {
    expect(rewrite(hash)).toBeUndefined();
  });

  it('is injected once, first in <head>, so it runs before Redoc reads the hash', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-docs-')), 'index.html');
    writeFileSync(
      file,
      '<!DOCTYPE html>\n<html><head><title>x</title></head><body><script>hydrate()</script></body></html>',
    );
    addLegacyAnchors(file, SPEC_PATH);
    addLegacyAnchors(file, SPEC_PATH);
    const html = readFileSync(file, 'utf8');
    expect(html.split('Redoc 2 anchors').length).toBe(2);
    expect(html.indexOf('window.location.replace')).toBeLessThan(html.indexOf('<title>'));
  });
});

describe('/docs/… paths', async () => {
  const { app } = await createTestApp();

  it.each([
    ['/docs/', '/docs'],
    ['/docs/tag/Models/operation/listModels', '/docs#tag/Models/operation/listModels'],
    ['/docs/models/listmodels/', '/docs#models/listmodels'],
    ['/docs/index.html', '/docs'],
  ])('GET %s redirects (301, no key) to %s', async (from, to) => {
    const res = await request(app).get(from);
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe(to);
  });

  it('keeps a Location header to path characters: no header can be smuggled in', async () => {
    const res = await request(app).get('/docs/tag/%0d%0aSet-Cookie:x"y');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/docs#tag/%0d%0aSet-Cookie:x%22y');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('leaves other methods to the contract', async () => {
    expect((await request(app).post('/docs/x')).status).toBe(401);
  });
});
