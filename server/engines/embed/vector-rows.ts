/**
 * The `embed-passages` job's answer as the search index stores it, on the main thread. A module of its own:
 * embed-passages.ts loads the tokenizer and a SQLite connection, which the main thread never imports.
 */
import type { EmbeddedPassages } from './embed-passages.js';

/** One view per passage into the answer's one buffer, no copy. */
export function vectorRows(
  embedded: EmbeddedPassages,
  dimensions: number,
): Array<{ id: number; vector: Float32Array }> {
  return embedded.ids.map((id, index) => ({
    id,
    vector: embedded.vectors.subarray(index * dimensions, (index + 1) * dimensions),
  }));
}
