/**
 * The writes of the search index (storage/passage-store.ts owns its schema), in one place for the connections
 * that make them: the passage store's on the main thread, the extraction worker's own (index-passages.ts) for
 * the passages, and the background embedding worker's own (engines/embed/embed-passages.ts) for their vectors.
 * The FTS5 index follows `search_passages` by the table's triggers.
 */
export const INSERT_PASSAGE_SQL =
  'INSERT INTO search_passages (file_id, key_id, seq, title, body, indexed_at) VALUES (@fileId, @keyId, @seq, @title, @body, @indexedAt)';
export const DELETE_FILE_PASSAGES_SQL = 'DELETE FROM search_passages WHERE file_id = ?';
/** A passage's vector of a model; a passage removed meanwhile gets none. */
export const STORE_VECTOR_SQL = `
  INSERT OR REPLACE INTO search_passage_vectors (passage_id, model, vector)
  SELECT @id, @model, @vector WHERE EXISTS (SELECT 1 FROM search_passages WHERE id = @id)`;
/** A passage's claim for embedding, dropped once its vector is stored (or given up). */
export const RELEASE_CLAIM_SQL = 'DELETE FROM search_passage_embed_claims WHERE passage_id = ?';

/** A vector as stored: little-endian float32 bytes. */
export function vectorBytes(vector: readonly number[]): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes;
}
