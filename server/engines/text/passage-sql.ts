/**
 * The two writes of the search index's `search_passages` table (storage/passage-store.ts owns its schema), in
 * one place for the two connections that make them: the passage store's on the main thread, and the extraction
 * worker's own (index-passages.ts). The FTS5 index follows by the table's triggers.
 */
export const INSERT_PASSAGE_SQL =
  'INSERT INTO search_passages (file_id, key_id, seq, title, body, indexed_at) VALUES (@fileId, @keyId, @seq, @title, @body, @indexedAt)';
export const DELETE_FILE_PASSAGES_SQL = 'DELETE FROM search_passages WHERE file_id = ?';
