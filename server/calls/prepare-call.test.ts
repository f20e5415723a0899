// prepareCall, driven by a call scope built here: no Express, no server, no socket.
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../core/api-error.js';
import { buildRegistry } from '../providers/build-registry.js';
import { scopeFor } from '../../test/helpers/call-scope.js';
import { prepareCall, STAND_IN_HEADER } from './prepare-call.js';

const registry = buildRegistry({ providers: [], models: [], aliases: {}, routes: [] });
const deps = { registry, logger: pino({ level: 'silent' }) };
afterAll(() => registry.close());

describe('prepareCall with a call scope', () => {
  it("names the model on the scope's call record and builds the context from the scope", () => {
    const { scope, record, headers, controller } = scopeFor();
    const call = prepareCall(deps, scope, 'local-chat', 'chat');
    expect([record.modelRequested, record.model, record.provider]).toEqual(['local-chat', 'local:chat', 'local']);
    expect(call.call).toBe(record);
    expect(call.context.requestId).toBe('req_scope');
    expect(call.context.owner).toBe('key_scope');
    expect(call.context.signal.aborted).toBe(false);
    controller.abort(new Error('client left'));
    expect(call.context.signal.aborted).toBe(true);
    expect(headers.has(STAND_IN_HEADER)).toBe(false);
  });

  it("refuses a model the scope's key may not use, with the 403 of the registry", () => {
    const { scope, record } = scopeFor(['local:image']);
    let refused: unknown;
    try {
      prepareCall(deps, scope, 'local:chat', 'chat');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(403);
    expect(record.modelRequested).toBe('local:chat');
    expect(record.model).toBeNull();
  });
});
