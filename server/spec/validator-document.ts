/**
 * The validator's copy of the contract: `openapi/api.yaml` rewritten at start (never the file itself) so that
 * Ajv, inside express-openapi-validator, holds the event loop for a large accepted body about as long as it
 * takes to look at it once, while every body is accepted or refused exactly as the contract says, with the same
 * first error (the one our envelope's message and `param` name).
 *
 * Two costs of Ajv over our schemas grow with the body:
 * - A `oneOf`/`anyOf` tries every branch, and every branch that fails builds an error object (with its
 *   instance path string) only to throw it away: a text block of an Anthropic message is tried against eleven
 *   block types. A union whose branches are told apart by a tag (`type`, `role`: a property with a `const` or an
 *   `enum`, or the `not` of a catch-all branch, the sets disjoint; see `switchOn`) or by JSON type (string or
 *   array or null) can match one branch at most, so checking only the branch the tag or type selects accepts
 *   exactly what the union accepts.
 * - `maxLength`/`minLength` make Ajv count the code points of the whole string (a 24 MiB `audio_base64` is
 *   counted to the end even against `maxLength: 256`). A string's UTF-16 length bounds its code points (at most
 *   that many, at least half), so a custom format decides from `.length` and counts only when the length is
 *   within a factor of two of the bound and the string has surrogates at all.
 *
 * The union rewrite keeps errors: each rewritable union becomes `if: <switch> else: <the union as written>`.
 * The switch (`if`) runs with Ajv's errors off and reads the fast copies of the components (`omnigate-fast.*`:
 * switches all the way down); only a value the switch refuses runs the union as written, whose errors come out
 * as before, followed by Ajv's own "must match else schema". Length bounds become formats named for their bound
 * (`omnigate-max-length-256`), in an `allOf` so that they are checked where Ajv checked `maxLength` (before
 * `pattern` and `format`); `restoreLengthBoundErrors` turns their errors back into Ajv's `maxLength`/`minLength`
 * messages before the error envelope is written.
 */
import type { OpenApiDocument } from './load-spec.js';

type Schema = Record<string, unknown>;

/** An Ajv format definition, as express-openapi-validator's `formats` option takes it. */
export interface StringFormat {
  type: 'string';
  validate: (value: string) => boolean;
}

export interface ValidatorDocument {
  /** A fresh copy for one validator (the validator changes the document it is given). */
  document: OpenApiDocument;
  /** The length-bound formats the copy names. */
  formats: Record<string, StringFormat>;
}

const SCHEMAS_REF = '#/components/schemas/';
/** Component names of the fast copies; the contract's own names never contain this prefix. */
export const FAST_PREFIX = 'omnigate-fast.';
const MAX_FORMAT = 'omnigate-max-length-';
const MIN_FORMAT = 'omnigate-min-length-';

// Keywords whose value is a schema, a list of schemas, or a map of names to schemas: only these are walked, so a
// property *named* `maxLength` or `oneOf` is never mistaken for the keyword.
const SCHEMA_KEYS = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
]);
const LIST_KEYS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const MAP_KEYS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Text only people read; the fast copies leave it out (the validator never reports from them). */
const DOC_KEYS = new Set(['description', 'examples', 'example', 'title', 'discriminator']);

const SURROGATE = /[\uD800-\uDFFF]/;

/** Code points as Ajv counts them (its `ucs2length`: a lone surrogate counts as one). */
function codePoints(value: string): number {
  let length = 0;
  for (let pos = 0; pos < value.length; ) {
    length++;
    const unit = value.charCodeAt(pos++);
    if (unit >= 0xd800 && unit <= 0xdbff && pos < value.length && (value.charCodeAt(pos) & 0xfc00) === 0xdc00) {
      pos++;
    }
  }
  return length;
}

/** Ajv's `maxLength: max`, deciding from `.length` unless the string is within twice the bound and has surrogates. */
export function atMostCodePoints(value: string, max: number): boolean {
  if (value.length <= max) {
    return true;
  }
  if (value.length > 2 * max) {
    return false;
  }
  return SURROGATE.test(value) && codePoints(value) <= max;
}

/** Ajv's `minLength: min`, deciding from `.length` unless the string is within twice the bound and has surrogates. */
export function atLeastCodePoints(value: string, min: number): boolean {
  if (value.length < min) {
    return false;
  }
  if (value.length >= 2 * min) {
    return true;
  }
  return !SURROGATE.test(value) || codePoints(value) >= min;
}

/** A JSON Schema `if`/`then`/`else` (a schema, not a promise: `then` is the keyword). */
function ifThenElse(condition: unknown, then: unknown, otherwise: unknown): Schema {
  return { if: condition, then, else: otherwise };
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function componentName(ref: unknown): string | undefined {
  return typeof ref === 'string' && ref.startsWith(SCHEMAS_REF) ? ref.slice(SCHEMAS_REF.length) : undefined;
}

type Mode = 'fast' | 'kept';

/** The rewrite of one document; `fastNames` collects the components the fast copies reach. */
class Rewriter {
  readonly formats: Record<string, StringFormat> = {};
  readonly fastNames = new Set<string>();

  constructor(private readonly components: Record<string, unknown>) {}

  /** A component's schema, following `$ref`s between components. */
  resolve(schema: unknown): Schema | undefined {
    let current = schema;
    for (let hops = 0; isSchema(current) && typeof current.$ref === 'string' && hops < 10; hops++) {
      const name = componentName(current.$ref);
      current = name === undefined ? undefined : this.components[name];
    }
    return isSchema(current) ? current : undefined;
  }

  private lengthFormat(prefix: string, bound: number, check: (value: string, bound: number) => boolean): Schema {
    const name = `${prefix}${bound}`;
    this.formats[name] ??= { type: 'string', validate: (value) => check(value, bound) };
    return { format: name };
  }

  rewrite(schema: unknown, mode: Mode): unknown {
    if (!isSchema(schema)) {
      return schema;
    }
    const out: Schema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (mode === 'fast' && DOC_KEYS.has(key)) {
        continue;
      }
      if (key === '$ref' && mode === 'fast' && componentName(value) !== undefined) {
        const name = componentName(value) as string;
        this.fastNames.add(name);
        out.$ref = `${SCHEMAS_REF}${FAST_PREFIX}${name}`;
      } else if (SCHEMA_KEYS.has(key)) {
        out[key] = this.rewrite(value, mode);
      } else if (LIST_KEYS.has(key) && Array.isArray(value)) {
        out[key] = value.map((item) => this.rewrite(item, mode));
      } else if (MAP_KEYS.has(key) && isSchema(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, this.rewrite(item, mode)]));
      } else {
        out[key] = value;
      }
    }
    // Ajv checks maxLength before minLength, both before pattern and format: an allOf runs before all three.
    const bounds: Schema[] = [];
    if (typeof out.maxLength === 'number') {
      bounds.push(this.lengthFormat(MAX_FORMAT, out.maxLength, atMostCodePoints));
      delete out.maxLength;
    }
    if (typeof out.minLength === 'number') {
      bounds.push(this.lengthFormat(MIN_FORMAT, out.minLength, atLeastCodePoints));
      delete out.minLength;
    }
    const hadAllOf = 'allOf' in out;
    if (bounds.length > 0) {
      out.allOf = [...((out.allOf as unknown[] | undefined) ?? []), ...bounds];
    }
    const keyword = 'oneOf' in schema ? 'oneOf' : 'anyOf' in schema ? 'anyOf' : undefined;
    if (!keyword || ('oneOf' in schema && 'anyOf' in schema) || !Array.isArray(schema[keyword])) {
      return out;
    }
    const branches = schema[keyword] as unknown[];
    if (mode === 'fast') {
      const fast = this.fastUnion(branches, keyword);
      if (fast) {
        delete out[keyword];
        out.allOf = [...((out.allOf as unknown[] | undefined) ?? []), fast];
      }
      return out;
    }
    // Kept mode: the union as written stays where it was in Ajv's keyword order (applicators run not, anyOf,
    // oneOf, allOf, if): wrapped only when no allOf or if beside it would change which error comes first.
    if (hadAllOf || bounds.length > 0 || 'if' in out || 'then' in out || 'else' in out) {
      return out;
    }
    const fast = this.fastUnion(branches, keyword);
    if (!fast) {
      return out;
    }
    const union: Schema = { [keyword]: out[keyword] };
    if (out.discriminator !== undefined) {
      union.discriminator = out.discriminator;
      delete out.discriminator;
    }
    delete out[keyword];
    out.if = fast;
    out.else = union;
    return out;
  }

  /** The switch for a union that can match one branch at most, over fast copies; undefined when there is none. */
  private fastUnion(branches: unknown[], keyword: 'oneOf' | 'anyOf'): Schema | undefined {
    const fastBranch = (branch: unknown) => this.rewrite(branch, 'fast');
    const byType = this.typeSwitch(branches, fastBranch);
    if (byType) {
      return byType;
    }
    const byTag = this.tagSwitch(branches, fastBranch);
    if (byTag) {
      // Not an object: no tag to read; the union decides (over fast copies, so it stays cheap).
      return ifThenElse({ type: 'object' }, byTag, { [keyword]: branches.map(fastBranch) });
    }
    return undefined;
  }

  /** Branches of disjoint JSON types (string, array, null…): a value of one type can only match its branch. */
  private typeSwitch(branches: unknown[], fastBranch: (branch: unknown) => unknown): Schema | undefined {
    const seen = new Set<string>();
    const cases: Array<{ types: string[]; branch: unknown }> = [];
    for (const branch of branches) {
      const type = this.resolve(branch)?.type;
      const types = typeof type === 'string' ? [type] : Array.isArray(type) ? (type as string[]) : undefined;
      if (!types || types.length === 0) {
        return undefined;
      }
      for (const each of types) {
        // integer values are numbers: the two would overlap.
        const kind = each === 'integer' ? 'number' : each;
        if (seen.has(kind)) {
          return undefined;
        }
        seen.add(kind);
      }
      cases.push({ types, branch });
    }
    return cases.reduceRight<Schema | boolean>(
      (otherwise, { types, branch }) =>
        ifThenElse({ type: types.length === 1 ? types[0] : types }, fastBranch(branch), otherwise),
      false,
    ) as Schema;
  }

  /**
   * Object branches told apart by one tag property: each gives it a `const` or an `enum` (strings or null), the
   * sets disjoint, and requires it, except at most one branch that may leave it out (a Responses message without
   * `type`, an Anthropic client tool); at most one catch-all requires a tag that is `not` a `const`/`enum`
   * excluding every other branch's values. The tag (or its absence) then selects the only branch that can match.
   */
  private tagSwitch(branches: unknown[], fastBranch: (branch: unknown) => unknown): Schema | undefined {
    const firstProperties = this.resolve(branches[0])?.properties;
    for (const tag of isSchema(firstProperties) ? Object.keys(firstProperties) : []) {
      const switched = this.switchOn(tag, branches, fastBranch);
      if (switched) {
        return switched;
      }
    }
    return undefined;
  }

  private switchOn(tag: string, branches: unknown[], fastBranch: (branch: unknown) => unknown): Schema | undefined {
    const cases: Array<{ values: unknown[]; branch: unknown }> = [];
    const taken = new Set<unknown>();
    let optional: unknown;
    let catchAll: { branch: unknown; rejects: (value: unknown) => boolean } | undefined;
    for (const branch of branches) {
      const resolved = this.resolve(branch);
      const property = this.resolve((resolved?.properties as Schema | undefined)?.[tag]);
      if (!resolved || !property) {
        return undefined;
      }
      const required = Array.isArray(resolved.required) && resolved.required.includes(tag);
      const values = 'const' in property ? [property.const] : Array.isArray(property.enum) ? property.enum : undefined;
      const not = isSchema(property.not) && Object.keys(property.not).length === 1 ? property.not : undefined;
      const excluded = not && ('const' in not ? [not.const] : Array.isArray(not.enum) ? not.enum : undefined);
      if (values) {
        if (!values.every((value) => (typeof value === 'string' || value === null) && !taken.has(value))) {
          return undefined;
        }
        if (!required) {
          if (optional !== undefined) {
            return undefined;
          }
          optional = branch;
        }
        for (const value of values) {
          taken.add(value);
        }
        cases.push({ values, branch });
      } else if (excluded && required && !catchAll) {
        const onlyStrings = property.type === 'string';
        catchAll = {
          branch,
          rejects: (value) => excluded.includes(value) || (onlyStrings && typeof value !== 'string'),
        };
      } else {
        return undefined;
      }
    }
    if (catchAll && ![...taken].every(catchAll.rejects)) {
      return undefined;
    }
    const chain = cases.reduceRight<Schema | boolean>(
      (otherwise, { values, branch }) =>
        ifThenElse(
          { properties: { [tag]: values.length === 1 ? { const: values[0] } : { enum: values } }, required: [tag] },
          fastBranch(branch),
          otherwise,
        ),
      catchAll ? (fastBranch(catchAll.branch) as Schema) : false,
    );
    return (
      optional === undefined ? chain : ifThenElse({ not: { required: [tag] } }, fastBranch(optional), chain)
    ) as Schema;
  }
}

function rewriteContent(content: unknown, rewriter: Rewriter): void {
  if (!isSchema(content)) {
    return;
  }
  for (const media of Object.values(content)) {
    if (isSchema(media) && media.schema !== undefined) {
      media.schema = rewriter.rewrite(media.schema, 'kept');
    }
  }
}

/** Builds the rewritten document once per contract document; each call gets its own copy of it. */
function build(source: OpenApiDocument): { document: OpenApiDocument; formats: Record<string, StringFormat> } {
  const document = structuredClone(source) as OpenApiDocument & Schema;
  const original = (source.components?.schemas ?? {}) as Record<string, unknown>;
  const rewriter = new Rewriter(original);
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(original)) {
    schemas[name] = rewriter.rewrite(schema, 'kept');
  }
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values((item ?? {}) as Schema)) {
      if (!isSchema(operation)) {
        continue;
      }
      rewriteContent((operation.requestBody as Schema | undefined)?.content, rewriter);
      for (const response of Object.values((operation.responses ?? {}) as Schema)) {
        rewriteContent((response as Schema | undefined)?.content, rewriter);
      }
    }
  }
  // The fast copies of every component a switch reaches (rewriting one can reach more).
  const done = new Set<string>();
  let pending = [...rewriter.fastNames];
  while (pending.length > 0) {
    for (const name of pending) {
      done.add(name);
      if (Object.hasOwn(original, name)) {
        schemas[`${FAST_PREFIX}${name}`] = rewriter.rewrite(original[name], 'fast');
      }
    }
    pending = [...rewriter.fastNames].filter((name) => !done.has(name));
  }
  (document.components as Schema).schemas = schemas;
  return { document, formats: rewriter.formats };
}

const built = new WeakMap<OpenApiDocument, { document: OpenApiDocument; formats: Record<string, StringFormat> }>();

/** The validator's copy of `source` and the formats it names (see the file comment). */
export function validatorDocument(source: OpenApiDocument): ValidatorDocument {
  let result = built.get(source);
  if (!result) {
    result = build(source);
    built.set(source, result);
  }
  return { document: structuredClone(result.document), formats: result.formats };
}

interface ValidatorErrorItem {
  message?: string;
  errorCode?: string;
}

const LENGTH_FORMAT_MESSAGE = /^must match format "omnigate-(max|min)-length-(\d+)"$/;

/**
 * Gives a failed length-bound format the error Ajv's `maxLength`/`minLength` would have given (message and
 * code), so a refusal reads as it did before the rewrite. Changes `error.errors` in place.
 */
export function restoreLengthBoundErrors(error: unknown): void {
  const errors = (error as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) {
    return;
  }
  for (const item of errors as ValidatorErrorItem[]) {
    const match = typeof item?.message === 'string' ? LENGTH_FORMAT_MESSAGE.exec(item.message) : null;
    if (match) {
      const keyword = match[1] === 'max' ? 'maxLength' : 'minLength';
      item.message = `must NOT have ${match[1] === 'max' ? 'more' : 'fewer'} than ${match[2]} characters`;
      item.errorCode = `${keyword}.openapi.validation`;
    }
  }
}
