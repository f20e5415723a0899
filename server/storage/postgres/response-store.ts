/** Stored Responses on PostgreSQL: the same rows as the SQLite store, scoped to the key that created them. */
import type { OutputItem, ResponseObject } from '../../formats/openai-responses/wire-types.js';
import type { ChatMessage } from '../../core/chat.js';
import type { ResponseStore, StoredResponse } from '../response-store.js';
import { type PgPool, query, transaction } from './pool.js';

interface ResponseRow {
  response: string;
  conversation: string;
  input_items: string | null;
}

export function createPostgresResponseStore(pool: PgPool): ResponseStore {
  return {
    async save(entry) {
      await transaction(pool, async (client) => {
        await client.query(
          'INSERT INTO responses (id, key_id, created_at, response, conversation, input_items) VALUES ($1, $2, $3, $4, $5, $6)',
          [
            entry.id,
            entry.keyId,
            entry.createdAt,
            JSON.stringify(entry.response),
            JSON.stringify(entry.conversation),
            entry.inputItems === undefined ? null : JSON.stringify(entry.inputItems),
          ],
        );
        for (const item of entry.response.output) {
          await client.query(
            `INSERT INTO response_items (key_id, item_id, response_id, item) VALUES ($1, $2, $3, $4)
             ON CONFLICT (key_id, item_id) DO UPDATE SET response_id = EXCLUDED.response_id, item = EXCLUDED.item`,
            [entry.keyId, item.id, entry.id, JSON.stringify(item)],
          );
        }
      });
    },
    async get(id, keyId) {
      const { rows } = await query<ResponseRow>(
        pool,
        'SELECT response, conversation, input_items FROM responses WHERE id = $1 AND key_id = $2',
        [id, keyId],
      );
      const row = rows[0];
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
      const { rows } = await query<{ item: string }>(
        pool,
        'SELECT item FROM response_items WHERE item_id = $1 AND key_id = $2',
        [itemId, keyId],
      );
      return rows[0] ? (JSON.parse(rows[0].item) as OutputItem) : undefined;
    },
    async delete(id, keyId) {
      // The items go by the foreign key's cascade.
      const result = await query(pool, 'DELETE FROM responses WHERE id = $1 AND key_id = $2', [id, keyId]);
      return (result.rowCount ?? 0) > 0;
    },
    async deleteOlderThan(createdAt) {
      const result = await query(pool, 'DELETE FROM responses WHERE created_at < $1', [createdAt]);
      return result.rowCount ?? 0;
    },
  };
}
