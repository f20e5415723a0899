/**
 * The entry of the thread that loads and checks the contract at start (spec-thread.ts): the YAML parse and the
 * check against the OpenAPI schema allocate tens of megabytes the server never uses again, and they are freed
 * with this thread instead of staying in the main thread's heap.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkSpec, loadSpec } from './load-spec.js';

const { file } = workerData as { file: string };
try {
  const { yaml, json, document } = loadSpec(file);
  await checkSpec(document);
  parentPort!.postMessage({ yaml, json });
} catch (error) {
  parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
