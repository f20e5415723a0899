/**
 * The operations of openapi/api.yaml as the fuzz needs them: method, path template, parameters, the
 * request body's schema, content types and examples, and whether the contract lets it answer 503.
 */
import type { OpenApiDocument } from '../../server/spec/load-spec.js';

type Schema = Record<string, unknown>;

export interface SpecParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface SpecOperation {
  operationId: string;
  method: string;
  /** The template, `/v1/files/{id}`. */
  path: string;
  parameters: SpecParameter[];
  /** Content types of the request body, JSON first; empty when the operation takes no body. */
  contentTypes: string[];
  bodySchema?: Schema;
  /** The spec's own request examples: known-good bodies that reach the handlers. */
  bodyExamples: unknown[];
  declaresServiceUnavailable: boolean;
}

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function deref<T>(document: OpenApiDocument, value: T): T {
  const ref = (value as { $ref?: string }).$ref;
  if (!ref) {
    return value;
  }
  const target = ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document);
  return deref(document, target as T);
}

export function specOperations(document: OpenApiDocument): SpecOperation[] {
  const operations: SpecOperation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (!operation) {
        continue;
      }
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(
        (p) => deref(document, p) as unknown as SpecParameter,
      );
      const body = operation.requestBody
        ? (deref(document, operation.requestBody) as {
            content?: Record<string, { schema?: Schema; examples?: Record<string, unknown> }>;
          })
        : undefined;
      const contentTypes = Object.keys(body?.content ?? {}).sort(
        (a, b) => Number(b === 'application/json') - Number(a === 'application/json'),
      );
      const media = contentTypes.length > 0 ? body?.content?.[contentTypes[0]] : undefined;
      operations.push({
        operationId: operation.operationId as string,
        method: method.toUpperCase(),
        path,
        parameters,
        contentTypes,
        bodySchema: media?.schema,
        bodyExamples: Object.values(media?.examples ?? {}).map(
          (example) => (deref(document, example) as { value: unknown }).value,
        ),
        declaresServiceUnavailable: '503' in (operation.responses ?? {}),
      });
    }
  }
  return operations;
}

/**
 * The operation a request addresses, matched the way Express matches: on the raw (still percent-encoded)
 * path, one segment per parameter. Undefined for an unknown path or method.
 */
export function operationAt(operations: SpecOperation[], method: string, rawPath: string): SpecOperation | undefined {
  return operations.find((op) => {
    if (op.method !== method) {
      return false;
    }
    const pattern = op.path
      .split(/\{[^}]+\}/)
      .map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    return new RegExp(`^${pattern}/?$`).test(rawPath);
  });
}
