/**
 * How background writers learn that requests are being served. The main thread counts every request it starts in
 * one Int32 over shared memory; a background job that is handed the counter reads it between two steps and, when
 * it moved, steps more slowly. Lowering a worker's scheduling priority is not enough for writes: a 10 MB file's
 * passages written at full pace into the SQLite file raised chat's median latency by ~12 % at 400 calls a second
 * even though the writer ran at niceness 10 (the file's I/O and the kernel's work on it run on the same core
 * whatever the writer's niceness), and by nothing measurable at a quarter of that pace (bench/README.md, issue 34).
 */

/** Requests the main thread has started, modulo 2³²; only its changes mean anything. */
export const foregroundRequests = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));

/** Called once per request the server starts. */
export function countForegroundRequest(): void {
  Atomics.add(foregroundRequests, 0, 1);
}

/** Reads a counter like `foregroundRequests` (in a worker: the one its job was handed). */
export function foregroundCount(counter: Int32Array): number {
  return Atomics.load(counter, 0);
}
