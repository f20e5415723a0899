/** The entry module of every media worker thread (see pool/worker-pool.ts). */
import { mediaJobs } from './media-jobs.js';
import { serveJobs } from './pool/serve-jobs.js';

serveJobs(mediaJobs);
