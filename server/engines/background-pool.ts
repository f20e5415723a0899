/**
 * The pool of background work nobody waits for: the embedding of uploaded files' passages for semantic search
 * (`search.embedding_model: local:embed`). It is the media worker (the same `embed` job a `/v1/embeddings` call
 * runs) in a pool of its own, so that a 10 MB upload's ten thousand passages neither take the media pool's slots
 * from generations nor the CPU from chat: its one worker runs at niceness 19, the lowest priority, and on a core
 * the event loop also wants it gets the time the loop leaves over (bench/README.md, embeddings).
 * The worker exits after a minute idle, so a server that never embeds in the background holds none.
 */
import { createMediaPool, type MediaPool } from './media-pool.js';

/** The lowest scheduling priority Linux has: background embedding runs only on time chat does not want. */
export const BACKGROUND_EMBED_NICENESS = 19;
/** Longest one background batch may take (25 passages take milliseconds; a stuck worker is replaced). */
const BACKGROUND_JOB_TIMEOUT_MS = 60_000;
/** Batches that may wait; the search index sends one at a time, so this bounds nothing in practice. */
const BACKGROUND_QUEUE = 10_000;
/** The lexical embedder holds a batch's texts and vectors only. */
const BACKGROUND_HEAP_MB = 256;

export function createBackgroundPool(): MediaPool {
  return createMediaPool({
    workers: 1,
    queueLimit: BACKGROUND_QUEUE,
    jobTimeoutMs: BACKGROUND_JOB_TIMEOUT_MS,
    heapMb: BACKGROUND_HEAP_MB,
    niceness: BACKGROUND_EMBED_NICENESS,
  });
}
