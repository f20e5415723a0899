// `node --import ./test/helpers/record-imports.mjs`: records every module the main thread's ESM loader resolves,
// one URL a line, in the file named by RECORD_IMPORTS_TO (see record-imports-hooks.mjs).
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url, { data: { logFile: process.env.RECORD_IMPORTS_TO } });
