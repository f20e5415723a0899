/**
 * The verified keys of this process, in memory: authentication answers from here, synchronously, without a
 * database read per request (LiteLLM's read on its auth path is what exhausts its connection pools). A presented
 * key that is not held is verified by the key store once and then held, also when it is unknown, so a flood of
 * bad keys costs one read each, not one per request; the size bound keeps that flood from growing memory.
 *
 * Staleness is bounded by the KeyChangeFeed (key-change-feed.ts): a change to one key drops what is held for
 * that key (and every unknown key, one of which may just have been created); a change the feed cannot name
 * re-reads the list of keys in the background and drops or updates what it held. Every `reconcileMs` the same
 * re-read runs anyway, for notices that were lost. An answer read from the store while a change arrived is
 * not kept (it may predate the change): `generation` counts changes.
 *
 * Entries are keyed by a SHA-256 of the presented key under a random salt of this process, never by the key.
 */
import { hash, randomBytes } from 'node:crypto';
import type { KeyChange, KeyChangeFeed } from './key-change-feed.js';
import type { ApiKeyRecord, KeyStore } from './key-store.js';

export const KEY_CACHE_MAX_ENTRIES = 10_000;
/** The re-read that covers notices the feed lost. */
export const KEY_RECONCILE_MS = 30_000;

export interface KeyCache {
  /** What is held for `secret`: `{ record }` (undefined for an unknown or revoked key), or undefined when nothing is. No I/O. */
  cached(secret: string): { record: ApiKeyRecord | undefined } | undefined;
  /** The held answer, or the store's (then held). */
  verify(secret: string): Promise<ApiKeyRecord | undefined>;
  /** Re-reads the keys and drops or updates what is held (what the periodic reconcile runs). */
  reconcile(): Promise<void>;
  /** How many answers are held (tests, metrics). */
  size(): number;
  /** Stops listening and the periodic reconcile. */
  close(): void;
}

export interface KeyCacheOptions {
  reconcileMs?: number;
  maxEntries?: number;
  /** A reconcile that failed (the database unreachable): what is held stays, the next one tries again. */
  onError?: (error: unknown) => void;
}

export function createKeyCache(
  store: Pick<KeyStore, 'verify' | 'list'>,
  feed: Pick<KeyChangeFeed, 'subscribe'>,
  options: KeyCacheOptions = {},
): KeyCache {
  const maxEntries = options.maxEntries ?? KEY_CACHE_MAX_ENTRIES;
  const salt = randomBytes(32).toString('base64');
  const cacheKeyOf = (secret: string) => hash('sha256', salt + secret, 'base64');
  const held = new Map<string, { record: ApiKeyRecord | undefined }>();
  let generation = 0;
  let reconciling: Promise<void> | undefined;
  let reconcileAgain = false;

  function dropUnknown(): void {
    for (const [cacheKey, entry] of held) {
      if (!entry.record) {
        held.delete(cacheKey);
      }
    }
  }

  function onChange(change: KeyChange): void {
    generation++;
    dropUnknown();
    if (change.kind === 'unknown') {
      void reconcile();
      return;
    }
    for (const [cacheKey, entry] of held) {
      if (entry.record?.id === change.keyId) {
        held.delete(cacheKey);
      }
    }
  }

  async function readAndApply(): Promise<void> {
    const startedAt = generation;
    const records = await store.list();
    // Dropping is always safe (the next request reads again); updating only when no change came meanwhile, for
    // the list may predate it.
    const current = new Map(records.map((record) => [record.id, record]));
    for (const [cacheKey, entry] of held) {
      if (!entry.record) {
        held.delete(cacheKey); // an unknown key may have been created since
        continue;
      }
      const fresh = current.get(entry.record.id);
      if (!fresh || fresh.revokedAt !== null) {
        held.delete(cacheKey);
      } else if (generation === startedAt) {
        entry.record = fresh;
      }
    }
  }

  /** One pass at a time; a pass asked for while one runs runs after it (it must read after the change). */
  function reconcile(): Promise<void> {
    if (reconciling) {
      reconcileAgain = true;
      return reconciling;
    }
    reconciling = (async () => {
      try {
        do {
          reconcileAgain = false;
          await readAndApply();
        } while (reconcileAgain);
      } catch (error) {
        options.onError?.(error);
      } finally {
        reconciling = undefined;
      }
    })();
    return reconciling;
  }

  const unsubscribe = feed.subscribe(onChange);
  const timer = setInterval(() => void reconcile(), options.reconcileMs ?? KEY_RECONCILE_MS);
  timer.unref();

  return {
    cached(secret) {
      return held.get(cacheKeyOf(secret));
    },
    async verify(secret) {
      const cacheKey = cacheKeyOf(secret);
      const hit = held.get(cacheKey);
      if (hit) {
        return hit.record;
      }
      const startedAt = generation;
      const record = await store.verify(secret);
      if (generation === startedAt) {
        if (held.size >= maxEntries) {
          dropUnknown();
          if (held.size >= maxEntries) {
            held.clear();
          }
        }
        held.set(cacheKey, { record });
      }
      return record;
    },
    reconcile,
    size: () => held.size,
    close() {
      unsubscribe();
      clearInterval(timer);
    },
  };
}
