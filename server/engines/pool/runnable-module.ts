/**
 * The URL of a module next to the caller, in the form this process runs: `.ts` when the server runs from its
 * sources under tsx (tests, `npm run dev`), `.js` when it runs from the compiled build in dist/ (`npm start`).
 * Worker threads and child processes are started from such URLs, so the name is written once without its
 * extension and both forms find their entry.
 */
export function runnableModule(relativeName: string, callerUrl: string): URL {
  const extension = new URL(callerUrl).pathname.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`${relativeName}${extension}`, callerUrl);
}

/** Whether a module URL is TypeScript source, which a fresh thread or process can only load through tsx. */
export function needsTypeScriptLoader(module: URL): boolean {
  return module.pathname.endsWith('.ts');
}
