// The loader hooks of record-imports.mjs. They run on Node's loader thread, so each URL is appended to the log
// file synchronously, as it is resolved: the log is complete however abruptly the process ends (process.exit).
// Worker threads have their own loader and are not recorded: only the main thread is.
import { appendFileSync } from 'node:fs';

let logFile;

export function initialize(data) {
  logFile = data.logFile;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (logFile) {
    appendFileSync(logFile, `${resolved.url}\n`);
  }
  return resolved;
}
