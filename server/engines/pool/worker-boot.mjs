// Every pool worker starts here: it teaches the thread TypeScript (the server runs from source with tsx) and
// then loads the worker's own entry module, named by the pool.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
