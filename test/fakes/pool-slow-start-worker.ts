/** The pool test worker, but its start-up takes 1.5 s at least (a slow import on a busy machine). */
import { serveJobs } from '../../server/engines/pool/serve-jobs.js';
import { poolTestJobs, SLOW_START_MS } from './pool-jobs-worker-jobs.js';

Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, SLOW_START_MS);
serveJobs(poolTestJobs);
