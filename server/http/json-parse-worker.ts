/** The entry module of the JSON parse thread (json-parse-pool.ts): serves the job of json-parse-job.ts. */
import { serveJobs } from '../engines/pool/serve-jobs.js';
import { parseJsonBytes, type JsonParseJobs } from './json-parse-job.js';

serveJobs({ parseJson: async (input) => parseJsonBytes(input) } satisfies JsonParseJobs);
