/**
 * A key's storage quota (`OMNIGATE_FILE_QUOTA_BYTES`) as generations see it: its uploaded files and the media
 * kept for it (images, speech and music answered by URL, a video with its thumbnail and input image) draw on
 * one budget, each generated blob until its link expires. A generation is refused before any work when the
 * key has no room left at all, and its result when keeping it would pass the quota (the admission runs in the
 * blob store's insert, atomically, so concurrent generations cannot both slip under).
 */
import { ApiError } from '../core/api-error.js';
import type { BlobOwner } from '../storage/blob-store.js';

export interface StorageQuota {
  /** Each key's quota of stored bytes. */
  maxBytes: number;
  /** What the key holds now: live files and live generated media. */
  held(keyId: string, nowSeconds: number): Promise<number>;
}

const MIB = 1024 * 1024;
/** A byte count as quota messages show it: MiB to one decimal from 1 MiB up, else bytes. */
export const describeBytes = (bytes: number) =>
  bytes >= MIB ? `${Math.round((bytes / MIB) * 10) / 10} MiB` : `${bytes} bytes`;

export function storageQuotaError(quota: StorageQuota, held: number): ApiError {
  return new ApiError(
    413,
    `Keeping this result would take this key's storage past its quota of ${describeBytes(quota.maxBytes)} (${describeBytes(held)} used by its files and generated media). Delete files, or wait for media links to expire.`,
    { code: 'storage_quota_exceeded', retryable: false },
  );
}

/** Refuses at once (before a model runs) when the key's storage is already full. */
export async function checkStorageRoom(quota: StorageQuota, keyId: string, nowMs: number): Promise<void> {
  const held = await quota.held(keyId, Math.floor(nowMs / 1000));
  if (held >= quota.maxBytes) {
    throw storageQuotaError(quota, held);
  }
}

/**
 * The owner of a blob kept for the key: the blob store inserts its row only when it fits in the quota, checked
 * by the database with the insert (see storage/blob-store.ts), so concurrent generations, in this process or
 * another instance, cannot both slip under.
 */
export function chargedTo(quota: StorageQuota, keyId: string): BlobOwner {
  return {
    keyId,
    quota: { maxBytes: quota.maxBytes, refuse: (held) => storageQuotaError(quota, held) },
  };
}
