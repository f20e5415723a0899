/** True when console/dist is missing or older than the console's sources. */
export function consoleStale(): boolean;
/** Builds console/ into console/dist with Vite (throws with Vite's output when the build fails). */
export function buildConsole(): void;
/** Builds the console when stale; reports a failure on stderr without failing the start. */
export function ensureConsole(): void;
