/** A worker for the pool's own tests (the jobs are in pool-jobs-worker-jobs.ts). */
import { serveJobs } from '../../server/engines/pool/serve-jobs.js';
import { poolTestJobs } from './pool-jobs-worker-jobs.js';

serveJobs(poolTestJobs);
