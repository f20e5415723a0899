/** The entry module of the encoder thread (see encoder-client.ts): serves the jobs of encoder-jobs.ts. */
import { serveJobs } from '../engines/pool/serve-jobs.js';
import { encoderJobs } from './encoder-jobs.js';

serveJobs(encoderJobs);
