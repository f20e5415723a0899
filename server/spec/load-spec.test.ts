import { describe, expect, it } from 'vitest';
import { checkSpec, loadSpec } from './load-spec.js';

describe('checkSpec', () => {
  it('accepts the contract the server ships', async () => {
    await expect(checkSpec(loadSpec().document)).resolves.toBeUndefined();
  });

  it('rejects a document with a dangling $ref, so a broken spec stops the server at boot', async () => {
    const document = structuredClone(loadSpec().document);
    const operation = document.paths!['/v1/models']!.get!;
    (operation.responses as Record<string, unknown>)['200'] = { $ref: '#/components/responses/NoSuchResponse' };
    await expect(checkSpec(document)).rejects.toThrow(/NoSuchResponse/);
  });

  it('rejects a document that is not valid OpenAPI 3.1', async () => {
    const document = structuredClone(loadSpec().document) as unknown as Record<string, unknown>;
    delete document.info;
    await expect(checkSpec(document as never)).rejects.toThrow(/apiDoc was invalid/);
  });
});
