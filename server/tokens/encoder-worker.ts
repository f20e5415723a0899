/** The entry module of the encoder thread (see encoder-client.ts): serves the jobs of encoder-jobs.ts, below the main thread's priority. */
import { lowerOwnThreadPriority } from '../engines/pool/thread-priority.js';
import { serveJobs } from '../engines/pool/serve-jobs.js';
import { encoderJobs } from './encoder-jobs.js';

lowerOwnThreadPriority();
serveJobs(encoderJobs);
