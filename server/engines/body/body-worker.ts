/** The entry module of a body thread (body-pool.ts): serves the jobs of body-jobs.ts. */
import { serveJobs } from '../pool/serve-jobs.js';
import { decodeBase64Bytes, parseJsonBytes, type BodyJobs } from './body-jobs.js';

serveJobs({
  parseJson: async (input) => parseJsonBytes(input),
  decodeBase64: async (input) => decodeBase64Bytes(input),
} satisfies BodyJobs);
