// Builds the web console (console/) into console/dist, served by the gateway at /console
// (server/http/console-static.ts). No CDN and no external font: everything the page loads is in dist/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The polyfill would be inlined into the page; the gateway's CSP allows no inline script.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    chunkSizeWarningLimit: 300,
  },
});
