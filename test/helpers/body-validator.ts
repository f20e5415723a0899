/**
 * A request body validator compiled the way express-openapi-validator compiles one (its Ajv factory and request
 * options, formats in fast mode), without the middleware: for comparing the contract as written with the
 * validator's copy (server/spec/validator-document.ts) value by value, in tests and in bench/validator-ab.ts.
 */
import { createRequestAjv } from 'express-openapi-validator/dist/framework/ajv/index.js';
import { AjvOptions } from 'express-openapi-validator/dist/framework/ajv/options.js';
import type { ValidateFunction } from 'ajv';
import type { OpenApiDocument } from '../../server/spec/load-spec.js';
import type { StringFormat } from '../../server/spec/validator-document.js';

/** Validates `{ body }`, so error paths read `/body/...` as the middleware's do. */
export function bodyValidator(
  document: OpenApiDocument,
  schema: unknown,
  formats: Record<string, StringFormat> = {},
): ValidateFunction {
  const options = new AjvOptions({
    validateRequests: { allowUnknownQueryParameters: false },
    validateFormats: true,
    ajvFormats: { mode: 'fast' },
    formats,
    serDes: [],
  } as never).request;
  const ajv = createRequestAjv(structuredClone(document) as never, options as never);
  return ajv.compile({ components: document.components, required: ['body'], properties: { body: schema } });
}

/** Every `application/json` request body schema of a document, as `POST /v1/chat/completions` → schema. */
export function jsonBodySchemas(document: OpenApiDocument): Map<string, unknown> {
  const bodies = new Map<string, unknown>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      const schema = (operation as { requestBody?: { content?: Record<string, { schema?: unknown }> } } | null)
        ?.requestBody?.content?.['application/json']?.schema;
      if (schema) {
        bodies.set(`${method.toUpperCase()} ${path}`, schema);
      }
    }
  }
  return bodies;
}
