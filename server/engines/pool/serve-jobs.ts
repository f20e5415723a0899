/**
 * The worker side of the pool: answers each job message by running the named job from the table it was given.
 * One job at a time per worker; the pool never sends a second before the first is answered. A pool that names a
 * `niceness` has its workers lower their own scheduling priority here, before any job.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  failureOf,
  transferablesOf,
  type JobReply,
  type JobReporter,
  type JobRequest,
  type JobTable,
} from './job-protocol.js';
import { lowerOwnThreadPriority } from './thread-priority.js';

export function serveJobs(jobs: JobTable): void {
  const port = parentPort;
  if (!port) {
    throw new Error('serveJobs runs inside a worker thread');
  }
  // A background pool's worker (worker-pool.ts `niceness`) gives way to the main thread before its first job.
  const niceness = (workerData as { niceness?: unknown } | null)?.niceness;
  if (typeof niceness === 'number') {
    lowerOwnThreadPriority(niceness);
  }
  port.on('message', async (request: JobRequest) => {
    let reply: JobReply;
    try {
      const job = Object.hasOwn(jobs, request.kind) ? jobs[request.kind] : undefined;
      if (!job) {
        throw new Error(`no job named ${request.kind}`);
      }
      const reporter: JobReporter = {
        progress: (percent) => port.postMessage({ id: request.id, progress: percent } satisfies JobReply),
        childProcess: (pid, running) => port.postMessage({ id: request.id, childPid: pid, running } satisfies JobReply),
        part: (output) => port.postMessage({ id: request.id, part: output } satisfies JobReply),
      };
      reply = { id: request.id, ok: true, output: await job(request.input as never, reporter) };
    } catch (error) {
      reply = { id: request.id, ok: false, failure: failureOf(error) };
    }
    port.postMessage(reply, reply.ok ? transferablesOf(reply.output) : []);
  });
}
