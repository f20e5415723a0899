/**
 * Media a tool made, as it hands it over: always a signed link (the bytes go to the blob store, as REST `url`
 * answers do), and the bytes themselves only up to `INLINE_MEDIA_BYTES`, because MCP inlines media as base64
 * inside a JSON-RPC message and clients hold the whole message in memory (and a model's context).
 */
import type { GeneratedMedia } from '../core/models.js';
import { linkMedia } from '../calls/link-media.js';
import { checkStorageRoom } from '../calls/storage-quota.js';
import type { CallScope } from '../http/call-scope.js';
import type { ToolDeps, ToolMedia } from './tool-definition.js';

/** 1 MiB: a 1024² PNG of the built-in engine or a minute of speech fits; a video never does. */
export const INLINE_MEDIA_BYTES = 1024 * 1024;

export async function toolMedia(
  deps: ToolDeps,
  scope: Pick<CallScope, 'key' | 'baseUrl'>,
  kind: ToolMedia['kind'],
  media: GeneratedMedia,
  name: string,
  url?: string,
): Promise<ToolMedia> {
  const linked = url ?? (await linkMedia(deps.media, scope.baseUrl, media, (deps.now ?? Date.now)(), scope.key.id));
  return {
    kind,
    mediaType: media.mediaType,
    url: linked,
    name,
    data: media.data.byteLength <= INLINE_MEDIA_BYTES ? media.data : undefined,
  };
}

/** A tool always keeps what it makes, so a key whose storage is full is refused before the model runs. */
export async function checkToolStorageRoom(deps: ToolDeps, scope: Pick<CallScope, 'key'>): Promise<void> {
  await checkStorageRoom(deps.media.storage, scope.key.id, (deps.now ?? Date.now)());
}
