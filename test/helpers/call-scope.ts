// A call scope made by hand, as the edge (routes/mount-operations.ts) makes one from a request: what lets
// calls/ and tools/ be tested without Express.
import type { CallScope } from '../../server/http/call-scope.js';
import type { ApiKeyRecord } from '../../server/storage/key-store.js';
import type { CallRecord } from '../../server/usage/call-record.js';

export function scopeFor(allowedModels: string[] = []) {
  const record: CallRecord = {
    operation: 'test',
    modelRequested: null,
    model: null,
    provider: null,
    usage: null,
    units: null,
    media: null,
    defer() {},
    complete() {},
    whenEnded() {},
  };
  const key: ApiKeyRecord = {
    id: 'key_scope',
    name: 'scope test',
    prefix: '',
    allowedModels,
    createdAt: 0,
    revokedAt: null,
  };
  const headers = new Map<string, string>();
  const controller = new AbortController();
  const scope: CallScope = {
    requestId: 'req_scope',
    key,
    call: record,
    signal: controller.signal,
    baseUrl: 'https://gateway.example',
    setHeader: (name, value) => headers.set(name, value),
  };
  return { scope, record, headers, controller };
}
