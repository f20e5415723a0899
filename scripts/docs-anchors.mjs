// Keeps Redoc 2's deep links working on the Redoc page `npm run docs` builds. Redocly's current Redoc routes by
// hash *paths* (`#/models/listmodels`, `#/section/errors`) and shows its own "404 No page at this address" for
// anything else, so links written for Redoc 2 — `#tag/Models/operation/listModels`, `#operation/listModels`,
// `#tag/Models`, `#section/Errors` — and the server's redirect of `/docs/<path>` to `/docs#<path>` would land
// there. A small script, injected into the built page before Redoc starts, rewrites those hashes to the new form.
// The map from operation to tag comes from the contract, so `#operation/<id>` finds its section too.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const MARKER = '<!-- omnigate: Redoc 2 anchors -->';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Each operationId's section: its first tag, as Redoc slugs it. */
function operationSections(document) {
  const sections = {};
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (operation?.operationId && operation.tags?.[0]) {
        sections[operation.operationId] = operation.tags[0];
      }
    }
  }
  return sections;
}

/** The browser script (plain ES5, no dependencies): rewrites a Redoc 2 hash in place, before Redoc reads it. */
export function legacyAnchorScript(document) {
  const sections = JSON.stringify(operationSections(document)).replace(/</g, '\\u003c');
  return `${MARKER}<script>(function () {
  var sections = ${sections};
  function slug(text) {
    try { text = decodeURIComponent(text); } catch (e) {}
    return text.toLowerCase().replace(/\\s+/g, '-').replace(/&/g, '-and-').replace(/--+/g, '-').replace(/^-+|-+$/g, '');
  }
  var hash = window.location.hash, m, to;
  if (!hash || hash.length < 2 || hash.charAt(1) === '/') { return; }
  if ((m = /^#tag\\/([^/]+)\\/operation\\/([^/]+)/.exec(hash))) { to = '/' + slug(m[1]) + '/' + m[2].toLowerCase(); }
  else if ((m = /^#operation\\/([^/]+)/.exec(hash)) && sections[m[1]]) { to = '/' + slug(sections[m[1]]) + '/' + m[1].toLowerCase(); }
  else if ((m = /^#tag\\/([^/]+)/.exec(hash))) { to = '/' + slug(m[1]); }
  else if ((m = /^#section\\/([^/]+)/.exec(hash))) { to = '/section/' + slug(m[1]); }
  else { to = '/' + hash.slice(1); }
  window.location.replace('#' + to);
})();</script>`;
}

/** Injects the script into a built page right after `<head>`; a page that has it already is left alone. */
export function addLegacyAnchors(htmlPath, specPath) {
  const html = readFileSync(htmlPath, 'utf8');
  if (html.includes(MARKER)) {
    return;
  }
  const head = html.indexOf('<head>');
  if (head < 0) {
    throw new Error(`${htmlPath}: no <head> to put the anchor script in`);
  }
  const script = legacyAnchorScript(parse(readFileSync(specPath, 'utf8')));
  writeFileSync(htmlPath, `${html.slice(0, head + 6)}${script}${html.slice(head + 6)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // The page to patch: docs/index.html (what `npm run docs` writes) unless another is named.
  addLegacyAnchors(process.argv[2] ?? `${root}docs/index.html`, `${root}openapi/api.yaml`);
}
