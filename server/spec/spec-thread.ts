/**
 * Loads and checks the contract in a thread of its own (spec-worker.ts) while the main thread opens the stores:
 * the main thread only parses the JSON it gets back (~6 ms). Done in place, the YAML parse and the check took
 * ~1.2 s of the main thread's CPU at start and left ~16 MB more resident after start and 50 calls
 * (bench/README.md, issue 29).
 */
import { Worker } from 'node:worker_threads';
import { needsTypeScriptLoader, runnableModule } from '../engines/pool/runnable-module.js';
import { type LoadedSpec, type OpenApiDocument, SPEC_PATH } from './load-spec.js';

const ENTRY = runnableModule('./spec-worker', import.meta.url);
const BOOT = new URL('../engines/pool/worker-boot.mjs', import.meta.url);

/** The contract, loaded and checked as `loadSpec` and `checkSpec` do; rejects with the check's own message. */
export function loadCheckedSpec(file = SPEC_PATH): Promise<LoadedSpec> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(needsTypeScriptLoader(ENTRY) ? BOOT : ENTRY, {
      workerData: { entry: ENTRY.href, file },
      execArgv: [],
    });
    worker.once('message', (answer: { yaml: string; json: string } | { error: string }) => {
      void worker.terminate();
      if ('error' in answer) {
        reject(new Error(answer.error));
        return;
      }
      resolve({ document: JSON.parse(answer.json) as OpenApiDocument, yaml: answer.yaml, json: answer.json });
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the contract's loader thread exited (${code})`)));
  });
}
