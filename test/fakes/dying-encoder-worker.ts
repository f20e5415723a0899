/** An encoder thread that dies on its first job, as one that ran out of heap would (see encoder-client.test.ts). */
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', () => process.exit(3));
