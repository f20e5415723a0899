/**
 * An encoder thread that answers each count of a batch with the batch's size as its token count, so a test can
 * see which counts travelled together (see encoder-client.test.ts).
 */
import { serveJobs } from '../../server/engines/pool/serve-jobs.js';
import type { CountJobInput } from '../../server/tokens/encoder-jobs.js';

serveJobs({
  async countBatch({ counts }: { counts: CountJobInput[] }) {
    return counts.map(() => ({ countedTokens: counts.length, countedChars: 1, estimatedChars: 0 }));
  },
});
