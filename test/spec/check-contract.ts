/**
 * Structural checks on the OpenAPI document that Redocly's lint rules do not cover (or cover only loosely):
 * what every seed operation must declare, request-id and rate-limit headers on responses, components that
 * nothing reaches, constructs our toolchain cannot handle (`$defs`, `nullable`, request-side
 * `discriminator`). Each check is a pure function of the parsed document returning the problems it found,
 * so the tests can run them against the real spec and against deliberately broken mini-documents.
 */

/** One broken rule, with a JSON-pointer-like location. */
export interface Problem {
  check: string;
  at: string;
  message: string;
}

/** A parsed OpenAPI document; kept loose on purpose, the checks must survive malformed input. */
export type OpenApiDocument = Record<string, unknown>;

type Json = Record<string, unknown>;

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The operations every build of Omnigate must offer, as `METHOD path`. */
export const SEED_OPERATIONS = [
  'GET /v1/models',
  'POST /v1/chat/completions',
  'POST /v1/responses',
  'POST /anthropic/v1/messages',
  'POST /anthropic/v1/messages/count_tokens',
  'POST /v1/web/search',
  'POST /v1/search/answer',
  'POST /v1/images/generations',
  'POST /v1/videos',
  'GET /v1/videos/{id}',
  'POST /v1/audio/speech',
  'POST /v1/music/generations',
  'GET /v1/files',
  'POST /v1/files',
  'GET /v1/files/{id}',
  'DELETE /v1/files/{id}',
  'POST /v1/tools/web_search',
  'POST /v1/tools/image_understanding',
  'POST /v1/mcp',
] as const;

export const REQUEST_ID_HEADER = 'x-svc-request-id';
export const RATE_LIMIT_HEADERS = [
  'retry-after',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
] as const;
const CHECKED_COMPONENT_KINDS = ['schemas', 'responses', 'parameters', 'headers', 'securitySchemes'] as const;
/** Keys whose values are data (examples) or name maps (property names), never schema keywords. */
const DATA_KEYS = new Set(['example', 'examples', 'const', 'default', 'enum']);
const NAME_MAP_KEYS = new Set(['properties', 'patternProperties', 'dependentSchemas', 'headers', 'mapping']);

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointer(...segments: Array<string | number>): string {
  return `#/${segments.map((segment) => escapePointer(String(segment))).join('/')}`;
}

/** Follows an internal `$ref` (`#/a/b`) to its target; undefined for external or dangling refs. */
export function resolvePointer(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) {
    return undefined;
  }
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) && !Array.isArray(node)) {
      return undefined;
    }
    node = (node as Json)[segment];
  }
  return node;
}

/** Resolves a chain of `$ref` objects (a response that is a `$ref` to a `$ref` …) to the final object. */
function deref(document: OpenApiDocument, value: unknown): Json | undefined {
  const seen = new Set<string>();
  let node = value;
  while (isObject(node) && typeof node.$ref === 'string') {
    if (seen.has(node.$ref)) {
      return undefined;
    }
    seen.add(node.$ref);
    node = resolvePointer(document, node.$ref);
  }
  return isObject(node) ? node : undefined;
}

export interface OperationEntry {
  method: string;
  path: string;
  operation: Json;
  /** Path-item level parameters, which apply to every operation of the path. */
  pathItem: Json;
}

export function listOperations(document: OpenApiDocument): OperationEntry[] {
  const entries: OperationEntry[] = [];
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [path, rawItem] of Object.entries(paths)) {
    const pathItem = deref(document, rawItem);
    if (!pathItem) {
      continue;
    }
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method];
      if (isObject(operation)) {
        entries.push({ method, path, operation, pathItem });
      }
    }
  }
  return entries;
}

function label(entry: OperationEntry): string {
  return `${entry.method.toUpperCase()} ${entry.path}`;
}

function operationPointer(entry: OperationEntry, ...rest: Array<string | number>): string {
  return pointer('paths', entry.path, entry.method, ...rest);
}

function hasExample(mediaType: Json): boolean {
  if (mediaType.example !== undefined) {
    return true;
  }
  return isObject(mediaType.examples) && Object.keys(mediaType.examples).length > 0;
}

function isJsonMediaType(name: string): boolean {
  const base = name.split(';')[0].trim().toLowerCase();
  return base === 'application/json' || base.endsWith('+json');
}

function isSuccess(status: string): boolean {
  return /^2(\d\d|XX)$/i.test(status);
}

function responsesOf(document: OpenApiDocument, entry: OperationEntry): Array<[string, Json | undefined]> {
  const responses = isObject(entry.operation.responses) ? entry.operation.responses : {};
  return Object.entries(responses).map(([status, raw]) => [status, deref(document, raw)]);
}

/** Every seed operation exists, declares a request schema (if it has a body) and a 2xx response with content. */
export function checkSeedOperations(document: OpenApiDocument, seeds: readonly string[] = SEED_OPERATIONS): Problem[] {
  const check = 'seed-operations';
  const problems: Problem[] = [];
  const byLabel = new Map(listOperations(document).map((entry) => [label(entry), entry]));
  for (const seed of seeds) {
    const entry = byLabel.get(seed);
    if (!entry) {
      problems.push({ check, at: seed, message: 'seed operation is missing' });
      continue;
    }
    const requestBody = deref(document, entry.operation.requestBody);
    if (entry.operation.requestBody !== undefined) {
      const content = requestBody && isObject(requestBody.content) ? requestBody.content : {};
      if (Object.keys(content).length === 0) {
        problems.push({
          check,
          at: operationPointer(entry, 'requestBody'),
          message: `${seed}: request body has no content`,
        });
      }
      for (const [mediaTypeName, mediaType] of Object.entries(content)) {
        if (!isObject(mediaType) || !isObject(mediaType.schema)) {
          problems.push({
            check,
            at: operationPointer(entry, 'requestBody', 'content', mediaTypeName),
            message: `${seed}: request media type ${mediaTypeName} has no schema`,
          });
        }
      }
    }
    const successes = responsesOf(document, entry).filter(([status]) => isSuccess(status));
    const withContent = successes.filter(
      ([, response]) => response && isObject(response.content) && Object.keys(response.content).length > 0,
    );
    if (withContent.length === 0) {
      problems.push({
        check,
        at: operationPointer(entry, 'responses'),
        message: `${seed}: no 2xx response with content`,
      });
    }
    for (const [status, response] of withContent) {
      for (const [mediaTypeName, mediaType] of Object.entries(response!.content as Json)) {
        if (!isObject(mediaType) || !isObject(mediaType.schema)) {
          problems.push({
            check,
            at: operationPointer(entry, 'responses', status, 'content', mediaTypeName),
            message: `${seed}: ${status} media type ${mediaTypeName} has no schema`,
          });
        }
      }
    }
  }
  return problems;
}

/**
 * Every request body media type and every JSON response media type (2xx and errors, through `$ref`s to
 * `components/responses`) carries `example` or `examples`. Checked for every operation, not only seeds.
 */
export function checkExamples(document: OpenApiDocument): Problem[] {
  const check = 'examples';
  const problems: Problem[] = [];
  for (const entry of listOperations(document)) {
    const requestBody = deref(document, entry.operation.requestBody);
    if (requestBody && isObject(requestBody.content)) {
      for (const [name, mediaType] of Object.entries(requestBody.content)) {
        if (!isObject(mediaType) || !hasExample(mediaType)) {
          problems.push({
            check,
            at: operationPointer(entry, 'requestBody', 'content', name),
            message: `${label(entry)}: request media type ${name} has no example`,
          });
        }
      }
    }
    for (const [status, response] of responsesOf(document, entry)) {
      if (!response || !isObject(response.content)) {
        continue;
      }
      for (const [name, mediaType] of Object.entries(response.content)) {
        if (isJsonMediaType(name) && (!isObject(mediaType) || !hasExample(mediaType))) {
          problems.push({
            check,
            at: operationPointer(entry, 'responses', status, 'content', name),
            message: `${label(entry)}: ${status} ${name} response has no example`,
          });
        }
      }
    }
  }
  return problems;
}

/** Every response of every operation declares `x-svc-request-id` (header names compare case-insensitively). */
export function checkRequestIdHeaders(document: OpenApiDocument): Problem[] {
  const check = 'request-id-header';
  const problems: Problem[] = [];
  for (const entry of listOperations(document)) {
    for (const [status, response] of responsesOf(document, entry)) {
      const headers = response && isObject(response.headers) ? Object.keys(response.headers) : [];
      if (!headers.some((name) => name.toLowerCase() === REQUEST_ID_HEADER)) {
        problems.push({
          check,
          at: operationPointer(entry, 'responses', status),
          message: `${label(entry)}: ${status} response lacks the ${REQUEST_ID_HEADER} header`,
        });
      }
    }
  }
  return problems;
}

/** Every 429 response (inline or referenced) declares `Retry-After` and the `x-ratelimit-*-requests` headers. */
export function checkRateLimitHeaders(document: OpenApiDocument): Problem[] {
  const check = 'rate-limit-headers';
  const problems: Problem[] = [];
  for (const entry of listOperations(document)) {
    for (const [status, response] of responsesOf(document, entry)) {
      if (status !== '429') {
        continue;
      }
      const headers = new Set(
        (response && isObject(response.headers) ? Object.keys(response.headers) : []).map((name) => name.toLowerCase()),
      );
      const missing = RATE_LIMIT_HEADERS.filter((name) => !headers.has(name));
      if (missing.length > 0) {
        problems.push({
          check,
          at: operationPointer(entry, 'responses', status),
          message: `${label(entry)}: 429 response lacks ${missing.join(', ')}`,
        });
      }
    }
  }
  return problems;
}

/** operationIds are present and unique. */
export function checkOperationIds(document: OpenApiDocument): Problem[] {
  const check = 'operation-ids';
  const problems: Problem[] = [];
  const seen = new Map<string, string>();
  for (const entry of listOperations(document)) {
    const id = entry.operation.operationId;
    if (typeof id !== 'string' || id === '') {
      problems.push({ check, at: operationPointer(entry), message: `${label(entry)} has no operationId` });
      continue;
    }
    const first = seen.get(id);
    if (first) {
      problems.push({
        check,
        at: operationPointer(entry),
        message: `operationId ${id} is used by ${first} and ${label(entry)}`,
      });
    } else {
      seen.set(id, label(entry));
    }
  }
  return problems;
}

/** Every operation has a summary, a description and at least one tag, each declared in the top-level `tags`. */
export function checkOperationDocs(document: OpenApiDocument): Problem[] {
  const check = 'operation-docs';
  const problems: Problem[] = [];
  const declared = new Set((Array.isArray(document.tags) ? document.tags : []).filter(isObject).map((tag) => tag.name));
  for (const entry of listOperations(document)) {
    for (const field of ['summary', 'description'] as const) {
      const value = entry.operation[field];
      if (typeof value !== 'string' || value.trim() === '') {
        problems.push({ check, at: operationPointer(entry, field), message: `${label(entry)} has no ${field}` });
      }
    }
    const tags = entry.operation.tags;
    if (!Array.isArray(tags) || tags.length === 0) {
      problems.push({ check, at: operationPointer(entry, 'tags'), message: `${label(entry)} has no tags` });
      continue;
    }
    for (const tag of tags) {
      if (!declared.has(tag)) {
        problems.push({
          check,
          at: operationPointer(entry, 'tags'),
          message: `${label(entry)} uses undeclared tag ${String(tag)}`,
        });
      }
    }
  }
  return problems;
}

/** `info.version` is a semantic version, at least 1.0.0. */
export function checkInfoVersion(document: OpenApiDocument): Problem[] {
  const check = 'info-version';
  const version = isObject(document.info) ? document.info.version : undefined;
  const match =
    typeof version === 'string'
      ? /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(version)
      : null;
  if (!match) {
    return [
      { check, at: pointer('info', 'version'), message: `info.version ${JSON.stringify(version)} is not a semver` },
    ];
  }
  if (Number(match[1]) < 1) {
    return [{ check, at: pointer('info', 'version'), message: `info.version ${String(version)} is below 1.0.0` }];
  }
  return [];
}

/**
 * Walks every node, calling `visit` with its pointer. Values of data keywords (`example`, `enum`, …) are not
 * entered, and name maps (`properties`, `headers`, …) are entered without treating their keys as keywords.
 */
function walkKeywords(node: unknown, at: string, visit: (key: string, value: unknown, at: string) => void): void {
  if (Array.isArray(node)) {
    node.forEach((item, index) => walkKeywords(item, `${at}/${index}`, visit));
    return;
  }
  if (!isObject(node)) {
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    const childAt = `${at}/${escapePointer(key)}`;
    visit(key, value, childAt);
    if (DATA_KEYS.has(key)) {
      continue;
    }
    if (NAME_MAP_KEYS.has(key) && isObject(value)) {
      for (const [name, child] of Object.entries(value)) {
        walkKeywords(child, `${childAt}/${escapePointer(name)}`, visit);
      }
      continue;
    }
    walkKeywords(value, childAt, visit);
  }
}

/**
 * No `$defs` (openapi-typescript turns it into a required property; express-openapi-validator fails to load)
 * and no `nullable` (an OpenAPI 3.0 keyword that 3.1 tools ignore silently; use `type: [T, 'null']`).
 */
export function checkForbiddenKeywords(document: OpenApiDocument): Problem[] {
  const check = 'forbidden-keywords';
  const problems: Problem[] = [];
  walkKeywords(document, '#', (key, _value, at) => {
    if (key === '$defs' || key === 'nullable') {
      problems.push({ check, at, message: `\`${key}\` is not allowed` });
    }
  });
  return problems;
}

/** Collects the internal `$ref` targets (and discriminator mapping targets) found under `node`. */
function collectRefs(node: unknown, into: string[]): void {
  if (Array.isArray(node)) {
    node.forEach((item) => collectRefs(item, into));
    return;
  }
  if (!isObject(node)) {
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      into.push(value);
    } else if (key === 'mapping' && isObject(value)) {
      for (const target of Object.values(value)) {
        if (typeof target === 'string' && target.startsWith('#/')) {
          into.push(target);
        }
      }
    } else if (!DATA_KEYS.has(key)) {
      collectRefs(value, into);
    }
  }
}

/** The `#/components/<kind>/<name>` prefix of a ref (refs may point inside a component). */
function componentOf(ref: string): string | undefined {
  const match = /^#\/components\/([^/]+)\/([^/]+)/.exec(ref);
  return match ? `#/components/${match[1]}/${match[2]}` : undefined;
}

/** Every component (schemas, responses, parameters, headers, securitySchemes) is reached from the paths. */
export function checkUnusedComponents(document: OpenApiDocument): Problem[] {
  const check = 'unused-components';
  const components = isObject(document.components) ? document.components : {};
  const reached = new Set<string>();
  const queue: string[] = [];
  const roots: string[] = [];
  const { components: _components, ...outside } = document;
  collectRefs(outside, roots);
  queue.push(...roots);
  while (queue.length > 0) {
    const ref = queue.pop()!;
    const component = componentOf(ref);
    if (!component || reached.has(component)) {
      continue;
    }
    reached.add(component);
    const found: string[] = [];
    collectRefs(resolvePointer(document, component), found);
    queue.push(...found);
  }
  const usedSchemes = new Set<string>();
  const requirements = [
    ...(Array.isArray(document.security) ? document.security : []),
    ...listOperations(document).flatMap((entry) =>
      Array.isArray(entry.operation.security) ? entry.operation.security : [],
    ),
  ];
  for (const requirement of requirements) {
    if (isObject(requirement)) {
      Object.keys(requirement).forEach((name) => usedSchemes.add(name));
    }
  }
  const problems: Problem[] = [];
  for (const kind of CHECKED_COMPONENT_KINDS) {
    const group = isObject(components[kind]) ? components[kind] : {};
    for (const name of Object.keys(group)) {
      const used = kind === 'securitySchemes' ? usedSchemes.has(name) : reached.has(pointer('components', kind, name));
      if (!used) {
        problems.push({ check, at: pointer('components', kind, name), message: `${kind}/${name} is never used` });
      }
    }
  }
  return problems;
}

/**
 * No `discriminator` in a schema reachable from a request body: express-openapi-validator rejects valid
 * requests with it. Responses may use it (documentation only).
 */
export function checkRequestDiscriminators(document: OpenApiDocument): Problem[] {
  const check = 'request-discriminator';
  const problems: Problem[] = [];
  const visited = new Set<string>();
  const scan = (node: unknown, at: string): void => {
    const refs: string[] = [];
    walkKeywords(node, at, (key, value, keyAt) => {
      if (key === 'discriminator') {
        problems.push({ check, at: keyAt, message: 'request-side schema uses `discriminator`' });
      }
      if (key === '$ref' && typeof value === 'string') {
        refs.push(value);
      }
    });
    for (const ref of refs) {
      if (!visited.has(ref)) {
        visited.add(ref);
        scan(resolvePointer(document, ref), ref);
      }
    }
  };
  for (const entry of listOperations(document)) {
    if (entry.operation.requestBody !== undefined) {
      scan(entry.operation.requestBody, operationPointer(entry, 'requestBody'));
    }
  }
  return problems;
}

export const CONTRACT_CHECKS = {
  seedOperations: (document: OpenApiDocument) => checkSeedOperations(document),
  examples: checkExamples,
  requestIdHeaders: checkRequestIdHeaders,
  rateLimitHeaders: checkRateLimitHeaders,
  operationIds: checkOperationIds,
  operationDocs: checkOperationDocs,
  infoVersion: checkInfoVersion,
  forbiddenKeywords: checkForbiddenKeywords,
  unusedComponents: checkUnusedComponents,
  requestDiscriminators: checkRequestDiscriminators,
} satisfies Record<string, (document: OpenApiDocument) => Problem[]>;

/** Runs every check. */
export function checkContract(document: OpenApiDocument): Problem[] {
  return Object.values(CONTRACT_CHECKS).flatMap((run) => run(document));
}
