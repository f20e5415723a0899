/**
 * Stored Responses: what `previous_response_id` and `item_reference` need on any provider.
 *
 * Each row keeps the response object as returned and the canonical conversation up to and including that
 * turn (previous history + the request's input + the assistant output), so the next turn loads one row instead
 * of walking the chain. Output items are indexed by id for `item_reference`. Everything is scoped to the API
 * key that created it: another key's ids read as absent, never as forbidden, so ids leak nothing.
 */
import type { OutputItem, ResponseObject } from '../formats/openai-responses/wire-types.js';
import type { ChatMessage } from '../core/chat.js';
import type { SqliteDatabase } from './database.js';

export interface StoredResponse {
  response: ResponseObject;
  /** Canonical messages through this turn, without `instructions`: the next turn's history. */
  conversation: ChatMessage[];
  /** The request's input items as sent, when saved (for listing input items). */
  inputItems?: unknown[];
}

export interface ResponseStore {
  save(entry: {
    id: string;
    keyId: string;
    /** Unix seconds. */
    createdAt: number;
    response: ResponseObject;
    conversation: ChatMessage[];
    inputItems?: unknown[];
  }): Promise<void>;
  /** The key's stored response, or undefined (also for another key's id). */
  get(id: string, keyId: string): Promise<StoredResponse | undefined>;
  /** An output item of one of the key's stored responses, for `item_reference`. */
  getItem(itemId: string, keyId: string): Promise<OutputItem | undefined>;
  /** Deletes the key's response and its items; false when there was none. */
  delete(id: string, keyId: string): Promise<boolean>;
  /** Deletes every response created before `createdAt` (unix seconds); returns how many. */
  deleteOlderThan(createdAt: number): Promise<number>;
}

interface ResponseRow {
  response: string;
  conversation: string;
  input_items: string | null;
}

export function createResponseStore(db: SqliteDatabase): ResponseStore {
  db.exec(`CREATE TABLE IF NOT EXISTS responses (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    response TEXT NOT NULL,
    conversation TEXT NOT NULL,
    input_items TEXT
  );
  CREATE INDEX IF NOT EXISTS responses_created_at ON responses (created_at);
  CREATE TABLE IF NOT EXISTS response_items (
    key_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    response_id TEXT NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
    item TEXT NOT NULL,
    PRIMARY KEY (key_id, item_id)
  );
  CREATE INDEX IF NOT EXISTS response_items_response_id ON response_items (response_id);`);

  const insertResponse = db.prepare(
    'INSERT INTO responses (id, key_id, created_at, response, conversation, input_items) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertItem = db.prepare(
    'INSERT OR REPLACE INTO response_items (key_id, item_id, response_id, item) VALUES (?, ?, ?, ?)',
  );
  const selectResponse = db.prepare<[string, string], ResponseRow>(
    'SELECT response, conversation, input_items FROM responses WHERE id = ? AND key_id = ?',
  );
  const selectItem = db.prepare<[string, string], { item: string }>(
    'SELECT item FROM response_items WHERE item_id = ? AND key_id = ?',
  );
  // Items are deleted explicitly too: the cascade only works where the connection enables foreign keys.
  const deleteItems = db.prepare<[string]>('DELETE FROM response_items WHERE response_id = ?');
  const deleteResponse = db.prepare<[string, string]>('DELETE FROM responses WHERE id = ? AND key_id = ?');
  const deleteOldItems = db.prepare<[number]>(
    'DELETE FROM response_items WHERE response_id IN (SELECT id FROM responses WHERE created_at < ?)',
  );
  const deleteOldResponses = db.prepare<[number]>('DELETE FROM responses WHERE created_at < ?');

  const save = db.transaction((entry: Parameters<ResponseStore['save']>[0]) => {
    insertResponse.run(
      entry.id,
      entry.keyId,
      entry.createdAt,
      JSON.stringify(entry.response),
      JSON.stringify(entry.conversation),
      entry.inputItems === undefined ? null : JSON.stringify(entry.inputItems),
    );
    for (const item of entry.response.output) {
      insertItem.run(entry.keyId, item.id, entry.id, JSON.stringify(item));
    }
  });
  const remove = db.transaction((id: string, keyId: string): boolean => {
    if (!selectResponse.get(id, keyId)) {
      return false;
    }
    deleteItems.run(id);
    return deleteResponse.run(id, keyId).changes > 0;
  });
  const removeOlderThan = db.transaction((createdAt: number): number => {
    deleteOldItems.run(createdAt);
    return deleteOldResponses.run(createdAt).changes;
  });

  return {
    async save(entry) {
      save(entry);
    },
    async get(id, keyId) {
      const row = selectResponse.get(id, keyId);
      if (!row) {
        return undefined;
      }
      const stored: StoredResponse = {
        response: JSON.parse(row.response) as ResponseObject,
        conversation: JSON.parse(row.conversation) as ChatMessage[],
      };
      if (row.input_items !== null) {
        stored.inputItems = JSON.parse(row.input_items) as unknown[];
      }
      return stored;
    },
    async getItem(itemId, keyId) {
      const row = selectItem.get(itemId, keyId);
      return row ? (JSON.parse(row.item) as OutputItem) : undefined;
    },
    async delete(id, keyId) {
      return remove(id, keyId);
    },
    async deleteOlderThan(createdAt) {
      return removeOlderThan(createdAt);
    },
  };
}
