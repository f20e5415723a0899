/**
 * The server's side of the eSpeak NG child process (espeak-child.ts): started on the first call that needs
 * it, kept warm for the next, ended after `idleMs` without work, and killed when a call's signal fires (an
 * abort cannot interrupt its synchronous synthesis any other way), to be started afresh when next needed.
 * Calls are sent one at a time; a call waiting its turn that is aborted never reaches the child.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../core/api-error.js';
import type { Pcm } from '../audio/pcm.js';
import type { EspeakReply, EspeakRequest } from './espeak-protocol.js';
import { needsTypeScriptLoader, runnableModule } from '../pool/runnable-module.js';

const CHILD_MODULE = runnableModule('./espeak-child', import.meta.url);
/** From the sources the child first registers tsx (espeak-boot.mjs); the compiled build starts the child module itself. */
const CHILD_ENTRY = needsTypeScriptLoader(CHILD_MODULE) ? new URL('./espeak-boot.mjs', import.meta.url) : CHILD_MODULE;
const PACKAGE = '@echogarden/espeak-ng-emscripten';
const STDERR_TAIL = 4_096;

/** Whether the optional eSpeak NG package is installed (resolved, never loaded here). */
export function espeakInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve(PACKAGE);
    return true;
  } catch {
    return false;
  }
}

export type EspeakCall = Omit<EspeakRequest, 'id'>;

interface Running {
  child: ChildProcessWithoutNullStreams;
  /** Resolves when the child has loaded eSpeak and said so. */
  ready: Promise<void>;
  /** Called with each complete reply (header and PCM). */
  onReply?: (reply: EspeakReply, pcm: Int16Array | undefined) => void;
  onExit?: (reason: Error) => void;
  stderr: string;
}

export interface EspeakProcess {
  synthesize(call: EspeakCall, signal: AbortSignal): Promise<Pcm>;
  /** Whether a child process is running now (for tests and stats). */
  running(): boolean;
  close(): void;
}

export function createEspeakProcess(options: { idleMs?: number } = {}): EspeakProcess {
  const idleMs = options.idleMs ?? 60_000;
  let current: Running | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let turn: Promise<unknown> = Promise.resolve();
  let nextId = 1;

  function start(): Running {
    const child = spawn(process.execPath, [fileURLToPath(CHILD_ENTRY)], { stdio: ['pipe', 'pipe', 'pipe'] });
    const running: Running = { child, stderr: '', ready: Promise.resolve() };
    let buffered: Buffer = Buffer.alloc(0);
    let header: EspeakReply | undefined;
    running.ready = new Promise((resolve, reject) => {
      running.onReply = (reply) => (reply.ok ? resolve() : reject(new Error(reply.message)));
      running.onExit = reject;
    });
    child.stdout.on('data', (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      for (;;) {
        if (!header) {
          const newline = buffered.indexOf(10);
          if (newline < 0) {
            return;
          }
          header = JSON.parse(buffered.subarray(0, newline).toString('utf8')) as EspeakReply;
          buffered = buffered.subarray(newline + 1);
        }
        const length = header.ok ? header.byteLength : 0;
        if (buffered.length < length) {
          return;
        }
        // Copied out, so the samples are aligned and the rest of the buffer can be let go.
        const pcm = header.ok ? new Int16Array(new Uint8Array(buffered.subarray(0, length)).buffer) : undefined;
        buffered = buffered.subarray(length);
        const reply = header;
        header = undefined;
        running.onReply?.(reply, pcm);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      running.stderr = (running.stderr + chunk).slice(-STDERR_TAIL);
    });
    child.stdin.on('error', () => {}); // a dead child's EPIPE; its exit is what gets reported
    const exited = (detail: string) => {
      if (current === running) {
        current = undefined;
      }
      running.onExit?.(
        new Error(`the eSpeak NG process ${detail}${running.stderr ? `: ${running.stderr.trim()}` : ''}`),
      );
    };
    child.on('error', (error) => exited(`failed to start (${error.message})`));
    child.on('exit', (code, signal) => exited(`exited (${signal ?? `code ${code}`})`));
    hold(running, false);
    return running;
  }

  /** A warm child waiting for work must not keep the process alive; one with a call in flight must. */
  function hold(running: Running, busy: boolean): void {
    for (const handle of [
      running.child,
      running.child.stdout,
      running.child.stderr,
      running.child.stdin,
    ] as unknown as Socket[]) {
      if (busy) {
        handle.ref();
      } else {
        handle.unref();
      }
    }
  }

  function stop(running: Running | undefined): void {
    if (running && current === running) {
      current = undefined;
    }
    running?.child.kill('SIGKILL');
  }

  async function send(call: EspeakCall, signal: AbortSignal): Promise<Pcm> {
    signal.throwIfAborted();
    clearTimeout(idleTimer);
    const running = (current ??= start());
    const id = nextId++;
    hold(running, true);
    try {
      return await new Promise<Pcm>((resolve, reject) => {
        const onAbort = () => {
          stop(running);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        const settle = () => signal.removeEventListener('abort', onAbort);
        running.onExit = (error) => {
          settle();
          reject(new ApiError(500, `eSpeak NG failed: ${error.message}`, { code: 'engine_failed', cause: error }));
        };
        running.ready.then(
          () => {
            running.onReply = (reply, pcm) => {
              if (reply.id !== id) {
                return;
              }
              settle();
              if (reply.ok && pcm) {
                resolve({ samples: pcm, sampleRate: reply.sampleRate, channels: 1 });
              } else if (!reply.ok && reply.badVoice) {
                reject(new ApiError(400, reply.message, { param: 'voice', code: 'unknown_voice' }));
              } else {
                reject(
                  new ApiError(500, `eSpeak NG failed: ${reply.ok ? 'no audio' : reply.message}`, {
                    code: 'engine_failed',
                  }),
                );
              }
            };
            running.child.stdin.write(`${JSON.stringify({ id, ...call } satisfies EspeakRequest)}\n`);
          },
          (error: Error) => {
            settle();
            stop(running);
            reject(
              new ApiError(500, `eSpeak NG did not start: ${error.message}`, { code: 'engine_failed', cause: error }),
            );
          },
        );
      });
    } finally {
      hold(running, false);
      if (current) {
        const idle = current;
        idleTimer = setTimeout(() => {
          // Closing stdin lets the child exit by itself; it is killed only if it does not.
          idle.child.stdin.end();
          setTimeout(() => stop(idle), 2_000).unref();
          if (current === idle) {
            current = undefined;
          }
        }, idleMs).unref();
      }
    }
  }

  return {
    synthesize(call, signal) {
      const result = turn.then(() => send(call, signal));
      turn = result.catch(() => undefined);
      return result;
    },
    running: () => current !== undefined,
    close() {
      clearTimeout(idleTimer);
      stop(current);
    },
  };
}
