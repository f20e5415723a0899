/**
 * The values the contract allows at a place in a request body, for error messages. The validator says only
 * "must be equal to constant" when a field is one of several `const` branches (a message's `role`, a content
 * block's `type`): reading the allowed values from the schema lets the message name them.
 */
import type { OpenApiDocument } from '../spec/load-spec.js';

type Schema = Record<string, unknown>;

/** How far the walk goes through nested oneOf/anyOf/allOf and $refs before it gives up. */
const MAX_SCHEMAS = 500;

function resolve(document: OpenApiDocument, schema: unknown): Schema | undefined {
  let current = schema as Schema | undefined;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 10; hops++) {
    const pointer = (current.$ref as string).replace(/^#\//, '').split('/');
    current = pointer.reduce<unknown>(
      (node, key) => (node && typeof node === 'object' && Object.hasOwn(node, key) ? (node as Schema)[key] : undefined),
      document,
    ) as Schema | undefined;
  }
  return current && typeof current === 'object' ? current : undefined;
}

/** A schema and the branches it may take (oneOf/anyOf/allOf), $refs resolved. */
function alternatives(document: OpenApiDocument, schema: unknown): Schema[] {
  const found: Schema[] = [];
  const pending = [schema];
  while (pending.length > 0 && found.length < MAX_SCHEMAS) {
    const current = resolve(document, pending.pop());
    if (!current) {
      continue;
    }
    found.push(current);
    for (const key of ['oneOf', 'anyOf', 'allOf']) {
      if (Array.isArray(current[key])) {
        pending.push(...(current[key] as unknown[]));
      }
    }
  }
  return found;
}

/** The schemas that may apply at `path` as the validator reports it (`/body/messages/0/role`). */
function schemasAt(document: OpenApiDocument, operation: unknown, path: string): Schema[] {
  const [where, ...segments] = path.split('/').filter(Boolean);
  const content = (operation as { requestBody?: { content?: Record<string, { schema?: unknown }> } } | undefined)
    ?.requestBody?.content;
  if (where !== 'body' || !content) {
    return [];
  }
  let schemas = alternatives(document, (content['application/json'] ?? Object.values(content)[0])?.schema);
  for (const segment of segments) {
    const next: unknown[] = [];
    for (const schema of schemas) {
      const properties = schema.properties as Schema | undefined;
      if (/^\d+$/.test(segment) && schema.items) {
        next.push(schema.items);
      } else if (properties && Object.hasOwn(properties, segment)) {
        next.push(properties[segment]);
      }
    }
    schemas = next.flatMap((schema) => alternatives(document, schema));
  }
  return schemas;
}

/** The values the contract allows at `path`; [] when the place cannot be found. */
export function allowedValuesAt(document: OpenApiDocument, operation: unknown, path: string): unknown[] {
  const schemas = schemasAt(document, operation, path);
  const values = schemas.flatMap((schema) =>
    'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : [],
  );
  return [...new Set(values)];
}

/**
 * The fields that may not be sent together at `path`: a schema's `not: { required: [a, b] }`, which the
 * validator reports only as "must NOT be valid". [] when there is no such rule there.
 */
export function exclusiveFieldsAt(document: OpenApiDocument, operation: unknown, path: string): string[] {
  for (const schema of schemasAt(document, operation, path)) {
    const required = (schema.not as Schema | undefined)?.required;
    if (Array.isArray(required) && required.length > 1 && required.every((name) => typeof name === 'string')) {
      return required as string[];
    }
  }
  return [];
}
