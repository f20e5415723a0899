/**
 * The messages between the pool and its workers, and the one place that turns a job's failure into something
 * that crosses the thread boundary and back into an `ApiError`.
 */
import { ApiError } from '../../core/api-error.js';

/** What a running job may tell the pool besides its result. */
export interface JobReporter {
  /** How far the job is, 0–100; the pool hands it to the generation's `onProgress`. */
  progress(percent: number): void;
  /**
   * Names a child process the job started (`running: true`) and, later, one that has ended. Terminating a
   * worker thread does not end the processes it spawned, so the pool kills the ones still named when it has to
   * stop the job (caller gone, timeout, shutdown) or when the worker dies.
   */
  childProcess(pid: number, running: boolean): void;
  /**
   * Sends part of the output ahead of the result, in order (the pool hands it to the generation's `onPart`): a
   * large output crosses the thread boundary in pieces the event loop takes one at a time, rather than in one
   * structured clone of megabytes.
   */
  part(output: unknown): void;
}

/** A table of jobs a worker can run: each takes one structured-cloneable input and resolves one output. */
export type JobTable = Record<string, (input: never, reporter: JobReporter) => Promise<unknown>>;

export interface JobRequest {
  id: number;
  kind: string;
  input: unknown;
}

export interface JobFailure {
  status: number;
  message: string;
  code: string | null;
  param: string | null;
}

export type JobReply =
  | { id: number; ok: true; output: unknown }
  | { id: number; ok: false; failure: JobFailure }
  | { id: number; progress: number }
  | { id: number; part: unknown }
  | { id: number; childPid: number; running: boolean };

/** A job's error as it crosses threads: an `ApiError` keeps its status, anything else becomes a 500. */
export function failureOf(error: unknown): JobFailure {
  if (error instanceof ApiError) {
    return { status: error.status, message: error.message, code: error.code, param: error.param };
  }
  return {
    status: 500,
    message: error instanceof Error ? error.message : String(error),
    code: 'engine_failed',
    param: null,
  };
}

export function errorOf(failure: JobFailure, engine: string): ApiError {
  if (failure.status >= 500) {
    return new ApiError(500, `The ${engine} engine failed: ${failure.message}`, {
      code: failure.code ?? 'engine_failed',
    });
  }
  return new ApiError(failure.status, failure.message, { code: failure.code, param: failure.param });
}

/** The ArrayBuffers inside an output (top level and one level down), handed over instead of copied. */
export function transferablesOf(output: unknown): ArrayBuffer[] {
  const found = new Set<ArrayBuffer>();
  const visit = (value: unknown, depth: number) => {
    if (ArrayBuffer.isView(value) && value.buffer instanceof ArrayBuffer) {
      found.add(value.buffer);
    } else if (value instanceof ArrayBuffer) {
      found.add(value);
    } else if (depth < 2 && value && typeof value === 'object') {
      for (const item of Array.isArray(value) ? value : Object.values(value)) {
        visit(item, depth + 1);
      }
    }
  };
  visit(output, 0);
  return [...found];
}
