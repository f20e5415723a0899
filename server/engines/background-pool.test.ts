import { afterEach, describe, expect, it } from 'vitest';
import { threadNiceness } from '../../test/helpers/thread-niceness.js';
import { BACKGROUND_EMBED_NICENESS, createBackgroundPool } from './background-pool.js';
import type { MediaPool } from './media-pool.js';

let pool: MediaPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('the background pool', () => {
  it.runIf(process.platform === 'linux')(
    'embeds on a worker at niceness 19, the lowest priority, and holds no thread before its first job',
    async () => {
      const before = threadNiceness().filter((niceness) => niceness === BACKGROUND_EMBED_NICENESS).length;
      pool = createBackgroundPool();
      expect(pool.stats().workers).toBe(0);
      const { vectors } = await pool.use(new AbortController().signal, (slot) =>
        slot.run('embed', { inputs: ['storm petrels', 'harbour lights'], dimensions: 16 }),
      );
      expect(vectors).toHaveLength(2);
      expect(threadNiceness().filter((niceness) => niceness === BACKGROUND_EMBED_NICENESS).length).toBe(before + 1);
    },
  );
});
