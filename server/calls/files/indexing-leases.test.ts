import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../storage/database.js';
import { createFileStore, INDEXING_LEASE_SECONDS } from '../../storage/file-store.js';
import { renewIndexingLeases } from './indexing-leases.js';

const quiet = { warn() {} };

describe('file indexing leases across instances sharing a database', () => {
  it("keeps the file a live instance is indexing, and fails a stopped instance's once its lease runs out", async () => {
    // Two "instances" over one database: what each round of each does, on a clock the test moves.
    const files = createFileStore(openDatabase(':memory:'));
    const T = 1_000_000;
    const create = async () => {
      const created = await files.create(
        {
          keyId: 'key_a',
          blobId: 'b',
          filename: 'a.pdf',
          purpose: 'assistants',
          bytes: 1,
          sha256: 'x',
          mediaType: 'application/pdf',
          createdAt: T,
          expiresAt: null,
          indexing: { status: 'indexing' },
        },
        { maxBytes: 100, maxCount: 10 },
        T,
      );
      if (!('file' in created)) throw new Error('refused');
      return created.file.id;
    };
    const onA = await create(); // A is indexing this one (queued behind a long extraction)
    const onDead = await create(); // the instance indexing this one was killed
    const round = (inFlight: string[], seconds: number) =>
      renewIndexingLeases({ files, inFlight: () => inFlight, logger: quiet, now: () => seconds * 1000 });
    // B starts while both leases run: it fails neither.
    expect(await round([], T + 1)).toBe(0);
    // A renews every third of a lease; B's later rounds fail only the row nobody renews.
    for (let step = 1; step <= 6; step += 1) {
      const at = T + (step * INDEXING_LEASE_SECONDS) / 3;
      await round([onA], at);
      await round([], at + 1);
    }
    expect((await files.get(onA, 'key_a', T))?.indexing?.status).toBe('indexing');
    expect((await files.get(onDead, 'key_a', T))?.indexing).toMatchObject({ status: 'failed', code: 'interrupted' });
  });
});
