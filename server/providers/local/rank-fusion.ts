/** How the search index merges its full-text and vector rankings (semantic search, `search.embedding_model`). */
import type { PassageHit } from '../../storage/passage-store.js';

/** Reciprocal rank fusion's constant (Cormack et al.): a rank's weight is 1 / (RRF_K + rank). */
const RRF_K = 60;

/**
 * Reciprocal rank fusion of full-text and vector hits, per file (a file's best passage in each list counts):
 * a file found by both ranks above one found by either alone at the same rank. The hit kept is the full-text one
 * when there is one (its snippet shows the matched words); its score becomes the fused score.
 */
export function fuseByRank(lists: PassageHit[][]): PassageHit[] {
  const fused = new Map<string, { hit: PassageHit; score: number }>();
  for (const list of lists) {
    const seen = new Set<string>();
    for (const hit of list) {
      if (seen.has(hit.fileId)) {
        continue;
      }
      seen.add(hit.fileId);
      const weight = 1 / (RRF_K + seen.size);
      const entry = fused.get(hit.fileId);
      if (entry) {
        entry.score += weight;
      } else {
        fused.set(hit.fileId, { hit, score: weight });
      }
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).map(({ hit, score }) => ({ ...hit, score }));
}
