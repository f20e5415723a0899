/**
 * Builds the API reference exactly as `npm run docs` does (same command, temp output) and checks that the
 * page works offline and documents every operation.
 *
 * What Redocly CLI 2.77's `build-docs` writes: one HTML file whose JavaScript bundle is inlined
 * (`--inlineBundle`), a prerendered overview (`id="section/errors"`, …) and tag menu (`href="/chat"`, …),
 * and the whole contract embedded as `const __redoc_definition = {…};`. Operation pages are routed in the
 * browser, so operationIds appear in that embedded definition, not as prerendered anchors.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { listOperations, type OpenApiDocument } from './check-contract.js';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const spec = parse(readFileSync(join(ROOT, 'openapi/api.yaml'), 'utf8')) as OpenApiDocument;
const docsScript = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts.docs;

let workDirectory: string;
let html: string;

beforeAll(async () => {
  workDirectory = mkdtempSync(join(tmpdir(), 'omnigate-docs-'));
  // `redocly build-docs … -o docs/index.html && node scripts/docs-anchors.mjs`: the build, then the anchor patch.
  const [build, patch] = docsScript.split('&&').map((part) => part.trim());
  const [command, ...args] = build.split(/\s+/);
  const output = args.indexOf('-o');
  expect(command).toBe('redocly');
  expect(output, 'the docs script names its output with -o').toBeGreaterThan(0);
  args[output + 1] = join(workDirectory, 'index.html');
  await run('npx', ['--no', command, ...args], {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    timeout: 55_000,
  });
  const [node, ...patchArgs] = patch.split(/\s+/);
  expect(node).toBe('node');
  await run(process.execPath, [...patchArgs, join(workDirectory, 'index.html')], { cwd: ROOT, timeout: 30_000 });
  html = readFileSync(join(workDirectory, 'index.html'), 'utf8');
}, 60_000);

afterAll(() => {
  rmSync(workDirectory, { recursive: true, force: true });
});

describe('npm run docs', () => {
  it('patches the built page so Redoc 2 deep links still land (scripts/docs-anchors.mjs)', () => {
    expect(html).toContain('<!-- omnigate: Redoc 2 anchors -->');
  });

  it('inlines the Redoc bundle', () => {
    expect(docsScript).toContain('--inlineBundle');
    expect(html.length).toBeGreaterThan(1_000_000);
  });

  it('is self-contained: no external scripts or stylesheets', () => {
    const scriptTags = html.match(/<script\b[^>]*>/gi) ?? [];
    expect(scriptTags.length).toBeGreaterThan(0);
    expect(scriptTags.filter((tag) => /\bsrc\s*=/i.test(tag))).toEqual([]);
    expect(html).not.toMatch(/<script[^>]+src=["']?https?:/i);
    const stylesheets = (html.match(/<link\b[^>]*>/gi) ?? []).filter(
      (tag) => /stylesheet/i.test(tag) && /href=["']?https?:/i.test(tag),
    );
    expect(stylesheets).toEqual([]);
    expect(html).not.toMatch(/@import\s+url\(\s*["']?https?:/i);
  });

  it('embeds the current contract unchanged', () => {
    const match = /const __redoc_definition = (.*);\s*$/m.exec(html);
    expect(match, 'the embedded definition').not.toBeNull();
    expect(JSON.parse(match![1])).toEqual(spec);
  });

  it.each(
    listOperations(spec).map((entry) => [entry.operation.operationId as string, entry.operation.summary as string]),
  )('documents %s', (operationId, summary) => {
    expect(html).toContain(`"operationId":${JSON.stringify(operationId)}`);
    expect(html).toContain(JSON.stringify(summary).slice(1, -1));
  });

  it('prerenders the tag menu and the overview sections', () => {
    const tags = (spec.tags as Array<{ name: string }>).map((tag) => tag.name.toLowerCase().replace(/\s+/g, '-'));
    for (const tag of tags) {
      expect(html, `menu link for tag ${tag}`).toContain(`href="/${tag}"`);
    }
    expect(html).toContain('id="section/errors"');
    expect(html).toContain('id="section/authentication"');
  });
});
