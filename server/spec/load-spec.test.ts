import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSpec, loadSpec, SPEC_PATH } from './load-spec.js';
import { loadCheckedSpec } from './spec-thread.js';

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

describe('loadCheckedSpec (in a thread)', () => {
  it('gives the contract exactly as loadSpec reads it', async () => {
    const inPlace = loadSpec();
    const fromThread = await loadCheckedSpec();
    expect(fromThread.document).toEqual(inPlace.document);
    expect(fromThread.yaml).toBe(inPlace.yaml);
    expect(fromThread.json).toBe(inPlace.json);
  });

  it("rejects a broken contract with the check's own message", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-spec-'));
    try {
      const file = path.join(dir, 'api.yaml');
      writeFileSync(
        file,
        readFileSync(SPEC_PATH, 'utf8').replace(
          '"#/components/schemas/ModelList"',
          '"#/components/schemas/NoSuchList"',
        ),
      );
      await expect(loadCheckedSpec(file)).rejects.toThrow(/NoSuch/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
