/**
 * Loads `openapi/api.yaml`, the contract the server enforces, and checks it once at start: a broken
 * document stops the server at boot instead of failing every request (the validator loads lazily).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
// The validator's own loader, so the check at boot is exactly the resolution the validator will do.
import { OpenApiSpecLoader } from 'express-openapi-validator/dist/framework/openapi.spec.loader.js';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types.js';

export type OpenApiDocument = OpenAPIV3.DocumentV3_1;

export const SPEC_PATH = fileURLToPath(new URL('../../openapi/api.yaml', import.meta.url));

export interface LoadedSpec {
  document: OpenApiDocument;
  yaml: string;
  json: string;
}

export function loadSpec(file = SPEC_PATH): LoadedSpec {
  const yaml = readFileSync(file, 'utf8');
  const document = parseYaml(yaml) as OpenApiDocument;
  return { document, yaml, json: JSON.stringify(document) };
}

/** Resolves every `$ref` and validates the document against the OpenAPI 3.1 schema; throws on any problem. */
export async function checkSpec(document: OpenApiDocument): Promise<void> {
  await new OpenApiSpecLoader({
    apiDoc: structuredClone(document),
    validateApiSpec: true,
    $refParser: { mode: 'bundle' },
  }).load();
}
