/**
 * The background half of the search index: passages cut in the extraction worker and written a batch at a time
 * with the event loop free between batches, vectors claimed with a cursor a batch at a time, the extraction
 * worker below the event loop's priority, and the character cap recorded on the file.
 */
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { threadNiceness } from '../../../test/helpers/thread-niceness.js';
import { createMediaPool, type MediaPool } from '../../engines/media-pool.js';
import type { RunOptions } from '../../engines/pool/worker-pool.js';
import { PASSAGES_PER_MESSAGE } from '../../engines/text/extract-passages.js';
import { DEFAULT_EXTRACTION_LIMITS } from '../../engines/text/extract-text.js';
import { openDatabase } from '../../storage/database.js';
import { createPassageStore, type PassageStore } from '../../storage/passage-store.js';
import {
  createLocalSearchIndex,
  EXTRACTION_NICENESS,
  type LocalSearchIndex,
  type PassageEmbedder,
  WRITE_BATCH,
} from './search-index.js';
import { APPEND_PAUSE_MS, APPEND_SLICE } from './passage-writer.js';

let index: LocalSearchIndex | undefined;
afterEach(async () => {
  await index?.close();
  index = undefined;
});

const textFile = (id: string, text: string) => {
  const bytes = Buffer.from(text);
  return {
    id,
    keyId: 'key_1',
    filename: `${id}.txt`,
    mediaType: 'text/plain',
    bytes: bytes.length,
    open: async () => Readable.from([bytes]),
  };
};
/** About 1,000 characters a paragraph: one passage each. */
const paragraphs = (count: number, word = 'lighthouse') =>
  Array.from({ length: count }, (_, n) => `Paragraph ${n} about the ${word}. ${'Waves on rocks. '.repeat(58)}`).join(
    '\n\n',
  );

/** The store, with every append and claim it is given recorded, and whether the event loop turned before each. */
function recordingStore() {
  const store = createPassageStore(openDatabase(':memory:'));
  const appends: Array<{ size: number; firstSeq: number; loopTurnedBefore: boolean; timerRanBefore: boolean }> = [];
  const claims: Array<{ limit: number; afterId: number | undefined; got: number[] }> = [];
  let turned = true;
  let timerRan = true;
  let replaced = 0;
  const recorded: PassageStore = {
    ...store,
    async replace(...args) {
      replaced += 1;
      return store.replace(...args);
    },
    async append(file, passages, firstSeq, now) {
      appends.push({ size: passages.length, firstSeq, loopTurnedBefore: turned, timerRanBefore: timerRan });
      turned = false;
      setImmediate(() => {
        turned = true;
      });
      // A timer of APPEND_PAUSE_MS set now (as a chat call's would be) runs before the next slice only if the
      // pause between slices is a timer too: a setImmediate pause would run the next slice first.
      timerRan = false;
      setTimeout(() => {
        timerRan = true;
      }, APPEND_PAUSE_MS);
      return store.append(file, passages, firstSeq, now);
    },
    async claimUnembedded(model, limit, now, until, afterId) {
      const got = await store.claimUnembedded(model, limit, now, until, afterId);
      claims.push({ limit, afterId, got: got.map((row) => row.id) });
      return got;
    },
  };
  return { store, recorded, appends, claims, replaced: () => replaced };
}

/**
 * A pool that records which jobs it was asked to run, the size of each part a job sent ahead of its result, and
 * `onPart` callers' work: `events` says in order when a part arrived and when a job's result did.
 */
function recordingPool(pool: MediaPool, kinds: string[], events: string[] = []): MediaPool {
  return {
    ...pool,
    use: (signal, steps, options) =>
      pool.use(
        signal,
        (slot) =>
          steps({
            ...slot,
            run: (async (kind: string, input: never, runOptions?: RunOptions) => {
              kinds.push(kind);
              const onPart = runOptions?.onPart;
              const output = await slot.run(kind as never, input, {
                ...runOptions,
                ...(onPart && {
                  onPart: (part: unknown) => {
                    events.push(`part ${(part as string[]).length}`);
                    onPart(part);
                  },
                }),
              });
              events.push('result');
              return output;
            }) as typeof slot.run,
          }),
        options,
      ),
  };
}

const fakeEmbedder = (calls: number[]): PassageEmbedder => ({
  model: 'fake-embed',
  async embed(texts) {
    return texts.map(() => [1, 0]);
  },
  async embedPassages(texts) {
    calls.push(texts.length);
    return texts.map((_, n) => [1, n]);
  },
});

describe('local search index in the background', () => {
  it('cuts passages in the extraction worker and writes them APPEND_SLICE at a time, the event loop turning between', async () => {
    const { recorded, appends, replaced } = recordingStore();
    const pool = createMediaPool({ workers: 1, queueLimit: 10, jobTimeoutMs: 60_000 });
    const kinds: string[] = [];
    index = createLocalSearchIndex({ passages: recorded, pool: recordingPool(pool, kinds) });
    try {
      expect(await index.add(textFile('f_long', paragraphs(120)))).toEqual({ status: 'indexed' });
      expect(kinds).toEqual(['extract-passages']);
      expect(replaced()).toBe(0);
      // Smaller slices than the embedding's batches: a full-text insert is the dearest write on the event loop.
      expect(APPEND_SLICE).toBeLessThan(WRITE_BATCH);
      expect(appends.length).toBeGreaterThanOrEqual(Math.ceil(100 / APPEND_SLICE));
      expect(appends.every((append) => append.size <= APPEND_SLICE)).toBe(true);
      expect(appends.map((append) => append.firstSeq)).toEqual(appends.map((_, n) => n * APPEND_SLICE));
      expect(appends.every((append) => append.loopTurnedBefore)).toBe(true);
      expect(appends.every((append) => append.timerRanBefore)).toBe(true);
      expect(await index.search({ keyId: 'key_1', query: 'lighthouse', maxResults: 5 })).toHaveLength(1);
    } finally {
      await pool.close();
    }
  });

  it('receives a large file’s passages in parts of PASSAGES_PER_MESSAGE and starts writing before the last', async () => {
    const { recorded, appends } = recordingStore();
    const pool = createMediaPool({ workers: 1, queueLimit: 10, jobTimeoutMs: 60_000 });
    const events: string[] = [];
    const original = recorded.append;
    recorded.append = async (...args) => {
      events.push('append');
      return original(...args);
    };
    index = createLocalSearchIndex({ passages: recorded, pool: recordingPool(pool, [], events) });
    try {
      const count = 2 * PASSAGES_PER_MESSAGE + 30;
      expect(await index.add(textFile('f_parts', paragraphs(count)))).toEqual({ status: 'indexed' });
      // Two full parts, then the result with the rest: no message carries the whole file.
      expect(events.filter((event) => event.startsWith('part'))).toEqual([
        `part ${PASSAGES_PER_MESSAGE}`,
        `part ${PASSAGES_PER_MESSAGE}`,
      ]);
      expect(events.indexOf('append')).toBeLessThan(events.indexOf('result'));
      expect(appends.reduce((sum, append) => sum + append.size, 0)).toBe(count);
      expect(appends.map((append) => append.firstSeq)).toEqual(appends.map((_, n) => n * APPEND_SLICE));
      expect(await index.search({ keyId: 'key_1', query: 'lighthouse', maxResults: 5 })).toHaveLength(1);
    } finally {
      await pool.close();
    }
  });

  it('removes what the parts wrote when the extraction fails after sending them', async () => {
    const { recorded, store, appends } = recordingStore();
    const real = createMediaPool({ workers: 1, queueLimit: 10, jobTimeoutMs: 60_000 });
    // A worker that sends its first part and then dies (its memory, a crash): the part is written meanwhile.
    const failing: MediaPool = {
      ...real,
      use: async (_signal, steps) =>
        steps({
          signal: new AbortController().signal,
          run: (async (_kind: string, _input: never, runOptions?: RunOptions) => {
            runOptions?.onPart?.(Array.from({ length: 12 }, (_, n) => `Passage ${n} about the lighthouse.`));
            await new Promise((resolve) => setTimeout(resolve, 50));
            throw new Error('worker died');
          }) as never,
        }),
    };
    index = createLocalSearchIndex({ passages: recorded, pool: failing });
    try {
      expect(await index.add(textFile('f_dies', paragraphs(3)))).toMatchObject({
        status: 'failed',
        code: 'extraction_failed',
      });
      expect(appends.length).toBeGreaterThan(0);
      expect(await store.count('key_1')).toBe(0);
    } finally {
      await real.close();
    }
  });

  it('stops writing a file removed meanwhile and leaves none of its passages', async () => {
    const { recorded, store, appends } = recordingStore();
    index = createLocalSearchIndex({ passages: recorded });
    let removed: Promise<void> | undefined;
    const append = recorded.append;
    recorded.append = async (...args) => {
      removed ??= index!.remove('f_gone');
      return append(...args);
    };
    await index.add(textFile('f_gone', paragraphs(120)));
    await removed;
    expect(appends.length).toBe(1);
    expect(await store.count('key_1')).toBe(0);
  });

  it('embeds a batch of WRITE_BATCH at a time, each claim starting after the last passage claimed', async () => {
    const { recorded, store, claims } = recordingStore();
    const calls: number[] = [];
    index = createLocalSearchIndex({ passages: recorded });
    index.useEmbedder(fakeEmbedder(calls));
    await index.add(textFile('f_long', paragraphs(120)));
    await index.idle();
    const total = await store.count('key_1');
    expect(total).toBeGreaterThan(100);
    expect(await store.unembedded('fake-embed', 1_000)).toEqual([]);
    expect(calls.reduce((sum, n) => sum + n, 0)).toBe(total);
    expect(Math.max(...calls)).toBe(WRITE_BATCH);
    const working = claims.filter((claim) => claim.got.length > 0);
    expect(working.map((claim) => claim.afterId)).toEqual([
      0,
      ...working.slice(0, -1).map((claim) => claim.got[claim.got.length - 1]),
    ]);
    // After the cursor runs dry, one claim from the start finds nothing left: the run ends.
    expect(claims.slice(-2).map((claim) => [claim.afterId === 0, claim.got.length])).toEqual([
      [false, 0],
      [true, 0],
    ]);
  });

  it('indexes the text up to OMNIGATE_INDEX_MAX_CHARACTERS and records on the file that it was cut', async () => {
    const { recorded } = recordingStore();
    index = createLocalSearchIndex({
      passages: recorded,
      limits: { ...DEFAULT_EXTRACTION_LIMITS, maxCharacters: 3_000 },
    });
    const text = `${paragraphs(4, 'albatross')}\n\n${paragraphs(4, 'cormorant')}`;
    expect(await index.add(textFile('f_cut', text))).toEqual({
      status: 'indexed',
      code: 'truncated',
      reason: "Only the first 3000 characters of the file's text are indexed (OMNIGATE_INDEX_MAX_CHARACTERS).",
    });
    expect(await index.search({ keyId: 'key_1', query: 'albatross', maxResults: 5 })).toHaveLength(1);
    expect(await index.search({ keyId: 'key_1', query: 'cormorant', maxResults: 5 })).toEqual([]);
    // Within the cap nothing is said.
    expect(await index.add(textFile('f_whole', paragraphs(2, 'petrel')))).toEqual({ status: 'indexed' });
  });

  it.runIf(process.platform === 'linux')('extracts on a worker at niceness 10, below the event loop', async () => {
    const before = threadNiceness().filter((niceness) => niceness === EXTRACTION_NICENESS).length;
    index = createLocalSearchIndex({ passages: createPassageStore(openDatabase(':memory:')) });
    await index.add(textFile('f_1', paragraphs(2)));
    expect(threadNiceness().filter((niceness) => niceness === EXTRACTION_NICENESS).length).toBe(before + 1);
  });
});
