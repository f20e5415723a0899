/**
 * Checks a passthrough JSON answer against the contract's 200 `application/json` schema of its operation
 * (`ChatCompletion`, `ResponseObject`, `AnthropicMessage`), read from the loaded spec and compiled once per
 * document with one shared Ajv.
 *
 * The check is deliberately open, because real upstreams are supersets of our closed schemas (OpenAI's
 * `service_tier`, vLLM's extras, new Anthropic block types): closedness (`additionalProperties`/
 * `unevaluatedProperties: false`) and `enum` lists are dropped, `oneOf` becomes `anyOf` (open variants may
 * overlap), and the few required fields real servers leave out are optional (`UNREQUIRED`). What stays is the
 * skeleton a client relies on: the required fields, their JSON types, and `const` values such as
 * `object: "chat.completion"` or `type: "message"`.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Dialect } from '../../core/chat.js';
import type { OpenApiDocument } from '../../spec/load-spec.js';

/** Returns the first few schema errors of an answer (`/choices/0/message must be object`), empty when it fits. */
export type AnswerCheck = (answer: unknown) => string[];

const OPERATION_PATHS: Record<Dialect, string> = {
  'openai-chat': '/v1/chat/completions',
  'openai-responses': '/v1/responses',
  'anthropic-messages': '/anthropic/v1/messages',
};

/** Required by our schemas because Omnigate always sends them; upstreams without usage or fingerprints omit them. */
const UNREQUIRED: Record<string, readonly string[]> = {
  ChatCompletion: ['system_fingerprint', 'usage'],
  ChatCompletionChoice: ['logprobs'],
  ChatCompletionMessage: ['refusal'],
  AnthropicUsage: ['cache_creation_input_tokens', 'cache_read_input_tokens'],
};

const MAX_ERRORS = 3;
const MAX_ERROR_CHARS = 200;

type Json = Record<string, unknown>;

/** The open reading of one schema (see the file comment); property names are kept as they are. */
function relax(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(relax);
  }
  if (typeof node !== 'object' || node === null) {
    return node;
  }
  const relaxed: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (
      ((key === 'additionalProperties' || key === 'unevaluatedProperties') && value === false) ||
      key === 'enum' ||
      key === 'discriminator'
    ) {
      continue;
    }
    if (key === 'example' || key === 'examples') {
      continue;
    }
    if (key === 'properties' || key === '$defs' || key === 'patternProperties') {
      relaxed[key] = Object.fromEntries(Object.entries(value as Json).map(([name, schema]) => [name, relax(schema)]));
    } else {
      relaxed[key === 'oneOf' ? 'anyOf' : key] = relax(value);
    }
  }
  return relaxed;
}

function relaxedSchemas(document: OpenApiDocument): Json {
  const schemas: Json = {};
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    const relaxed = relax(schema) as Json;
    const optional = UNREQUIRED[name];
    if (optional && Array.isArray(relaxed.required)) {
      relaxed.required = relaxed.required.filter((field) => !optional.includes(field as string));
    }
    schemas[name] = relaxed;
  }
  return schemas;
}

function answerSchemaRef(document: OpenApiDocument, dialect: Dialect): string {
  const operation = document.paths?.[OPERATION_PATHS[dialect]]?.post;
  const response = operation?.responses?.['200'] as
    | { content?: Record<string, { schema?: { $ref?: string } }> }
    | undefined;
  const ref = response?.content?.['application/json']?.schema?.$ref;
  if (!ref?.startsWith('#/components/schemas/')) {
    throw new Error(`the contract has no 200 JSON schema for POST ${OPERATION_PATHS[dialect]}`);
  }
  return ref;
}

const compiled = new WeakMap<OpenApiDocument, Map<Dialect, AnswerCheck>>();

/** The answer check of a dialect's operation; compiled on first use, then shared by every call. */
export function answerCheck(document: OpenApiDocument, dialect: Dialect): AnswerCheck {
  let checks = compiled.get(document);
  if (!checks) {
    checks = new Map();
    compiled.set(document, checks);
  }
  const known = checks.get(dialect);
  if (known) {
    return known;
  }
  // Formats (date-time, uri…) are not checked: an open reading, and Ajv would need ajv-formats for them.
  const ajv = sharedAjv(document);
  const validate: ValidateFunction = ajv.compile({ $ref: `omnigate-passthrough${answerSchemaRef(document, dialect)}` });
  const check: AnswerCheck = (answer) => {
    if (validate(answer)) {
      return [];
    }
    return (validate.errors ?? [])
      .slice(0, MAX_ERRORS)
      .map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`.slice(0, MAX_ERROR_CHARS));
  };
  checks.set(dialect, check);
  return check;
}

const ajvs = new WeakMap<OpenApiDocument, Ajv2020>();

function sharedAjv(document: OpenApiDocument): Ajv2020 {
  let ajv = ajvs.get(document);
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
    ajv.addSchema({ $id: 'omnigate-passthrough', components: { schemas: relaxedSchemas(document) } });
    ajvs.set(document, ajv);
  }
  return ajv;
}
