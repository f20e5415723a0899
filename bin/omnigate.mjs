#!/usr/bin/env node
// The `omnigate` command: compiles server/ into dist/ when it is stale (as `npm start` does), then dispatches.
await import('../scripts/ensure-build.mjs');
await import('../dist/cli/omnigate.js');
