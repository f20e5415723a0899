/**
 * Files left `indexing` by a process that stopped (a crash, a kill, a machine gone) must not say so forever,
 * and one instance starting must not fail the files another live instance is indexing right now (several
 * instances share the database; so do the workers of `--workers N`). Each row created `indexing` carries a
 * lease (storage/file-store.ts `INDEXING_LEASE_SECONDS`); this process renews the leases of the files its
 * search index has queued or running every third of a lease, and gives `failed`/`interrupted` to rows whose
 * lease ran out — at start, and then at each renewal, so a dead instance's rows are failed by a live one
 * within about a lease and a third. A renewal that fails (the database away) is logged and tried again.
 */
import type { FileIndexState } from '../../core/file-index.js';
import { type FileStore, INDEXING_LEASE_SECONDS } from '../../storage/file-store.js';

export const INTERRUPTED_INDEXING: FileIndexState = {
  status: 'failed',
  code: 'interrupted',
  reason: 'The server indexing the file stopped before it finished; upload it again to index it.',
};

export interface IndexingLeaseOptions {
  files: Pick<FileStore, 'renewIndexing' | 'abandonIndexing'>;
  /** The files this process is indexing now. */
  inFlight(): string[];
  logger: { warn(object: Record<string, unknown>, message: string): void };
  /** Milliseconds since the epoch; Date.now when absent. */
  now?: () => number;
  intervalMs?: number;
}

/** One renewal and abandonment round (what the timer runs); resolves with how many rows were failed. */
export async function renewIndexingLeases(options: IndexingLeaseOptions): Promise<number> {
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  await options.files.renewIndexing(options.inFlight(), now + INDEXING_LEASE_SECONDS);
  return options.files.abandonIndexing(INTERRUPTED_INDEXING, now);
}

/** Runs a round now and every `intervalMs` (a third of a lease by default); returns the stop function. */
export function startIndexingLeases(options: IndexingLeaseOptions): () => void {
  const intervalMs = options.intervalMs ?? (INDEXING_LEASE_SECONDS * 1000) / 3;
  // One round at a time: a slow database never piles rounds up behind each other.
  let busy = false;
  const round = () => {
    if (busy) {
      return;
    }
    busy = true;
    void renewIndexingLeases(options)
      .then((failed) => {
        if (failed > 0) {
          options.logger.warn(
            { count: failed },
            'files left indexing by a stopped process marked failed (interrupted)',
          );
        }
      })
      .catch((error: unknown) =>
        options.logger.warn({ err: error }, 'renewing file indexing leases failed; will retry'),
      )
      .finally(() => {
        busy = false;
      });
  };
  round();
  const timer = setInterval(round, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
