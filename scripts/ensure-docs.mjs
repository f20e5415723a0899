// Builds docs/index.html (the Redoc page served at /docs) when it is missing or older than the contract,
// so `npm start` right after `npm install` serves current docs without a separate step.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { addLegacyAnchors } from './docs-anchors.mjs';

// Paths from the project root, so `omnigate start` works from any folder.
const root = fileURLToPath(new URL('..', import.meta.url));
const spec = `${root}openapi/api.yaml`;
const docs = `${root}docs/index.html`;
if (!existsSync(docs) || statSync(docs).mtimeMs < statSync(spec).mtimeMs) {
  try {
    // Output is kept quiet (Redocly prints banners); it is shown only if the build fails.
    execFileSync(
      'npx',
      [
        '--no-install',
        'redocly',
        'build-docs',
        spec,
        '--config',
        `${root}openapi/redocly.yaml`,
        '--inlineBundle',
        '-o',
        docs,
      ],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    // Redoc 2's `#tag/…/operation/…` links keep working (scripts/docs-anchors.mjs).
    addLegacyAnchors(docs, spec);
  } catch (error) {
    process.stderr.write(String(error.stderr ?? ''));
    process.stderr.write(
      'omnigate: could not build the API docs; /docs will answer 404 until `npm run docs` succeeds.\n',
    );
  }
}
