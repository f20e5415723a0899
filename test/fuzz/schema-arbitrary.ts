/**
 * Valid-ish values from a JSON Schema of openapi/api.yaml, as fast-check arbitraries. "Valid-ish": every
 * keyword the fuzz needs to get past the validator most of the time (types, const, enum, required, bounds,
 * patterns, oneOf/anyOf/allOf), nothing more; cross-field rules are left to chance, since a 400 is as good
 * an answer to check as a 200. Recursive schemas are cut off at MAX_DEPTH by dropping optional parts.
 */
import fc from 'fast-check';

type Schema = Record<string, unknown>;
/** `document.components`; only `schemas` is read. */
type Components = { schemas?: Record<string, object> };

const MAX_DEPTH = 6;
/** Longest generated string and array: the fuzz is about shapes, huge values are a mutation of their own. */
const MAX_STRING = 40;
const MAX_ITEMS = 3;

function resolve(schema: Schema, components: Components): Schema {
  let current = schema;
  while (typeof current.$ref === 'string') {
    const name = current.$ref.replace('#/components/schemas/', '');
    const target = components.schemas?.[name] as Schema | undefined;
    if (!target) {
      throw new Error(`unresolvable $ref ${current.$ref}`);
    }
    const { $ref: _ref, ...siblings } = current;
    current = { ...target, ...siblings };
  }
  return current;
}

function stringArbitrary(schema: Schema): fc.Arbitrary<unknown> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.max(
    minLength,
    Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : MAX_STRING, MAX_STRING),
  );
  if (schema.format === 'binary' || typeof schema.contentMediaType === 'string') {
    // Raw bytes: the multipart encoder sends a Buffer as a file part, JSON as base64.
    return fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes));
  }
  if (schema.format === 'date-time') {
    return fc
      .date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true })
      .map((date) => date.toISOString());
  }
  if (schema.format === 'uri') {
    return fc.webUrl();
  }
  if (typeof schema.pattern === 'string') {
    try {
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((s) => s.length >= minLength && s.length <= Math.max(maxLength, minLength + 200));
    } catch {
      // A pattern fast-check cannot invert: plain strings, which the validator will mostly refuse.
    }
  }
  const examples = Array.isArray(schema.examples) ? schema.examples.filter((e) => typeof e === 'string') : [];
  const plain = fc.string({ minLength, maxLength, unit: 'grapheme' });
  return examples.length > 0 ? fc.oneof(fc.constantFrom(...examples), plain) : plain;
}

function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? schema.exclusiveMinimum + (integer ? 1 : 1e-9)
        : -1e6;
  const max =
    typeof schema.maximum === 'number'
      ? schema.maximum
      : typeof schema.exclusiveMaximum === 'number'
        ? schema.exclusiveMaximum - (integer ? 1 : 1e-9)
        : 1e6;
  return integer
    ? fc.integer({
        min: Math.ceil(Math.max(min, Number.MIN_SAFE_INTEGER)),
        max: Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER)),
      })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function objectArbitrary(schema: Schema, components: Components, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  // Past MAX_DEPTH only the required properties are generated, so recursive schemas terminate.
  const names = Object.keys(properties).filter((name) => required.has(name) || depth < MAX_DEPTH);
  const model = Object.fromEntries(
    names.map((name) => [name, schemaArbitrary(properties[name], components, depth + 1)]),
  );
  return fc.record(model, { requiredKeys: names.filter((name) => required.has(name)) });
}

/** Merges the objects generated for each part of an `allOf` (the spec uses allOf only for objects). */
function allOfArbitrary(parts: Schema[], components: Components, depth: number): fc.Arbitrary<unknown> {
  return fc
    .tuple(...parts.map((part) => schemaArbitrary(part, components, depth)))
    .map((values) =>
      values.every((value) => typeof value === 'object' && value !== null && !Array.isArray(value))
        ? Object.assign({}, ...values)
        : values[values.length - 1],
    );
}

export function schemaArbitrary(raw: Schema | undefined, components: Components, depth = 0): fc.Arbitrary<unknown> {
  if (!raw || Object.keys(raw).length === 0) {
    return fc.jsonValue({ maxDepth: 2 });
  }
  const schema = resolve(raw, components);
  if ('const' in schema) {
    return fc.constant(schema.const);
  }
  if (Array.isArray(schema.enum)) {
    return fc.constantFrom(...(schema.enum as unknown[]));
  }
  const choices = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (choices) {
    // Siblings of oneOf (a shared `type`, `properties`) apply to every branch.
    const { oneOf: _one, anyOf: _any, ...shared } = schema;
    return fc.oneof(
      ...choices.map((choice) => schemaArbitrary({ ...shared, ...resolve(choice, components) }, components, depth + 1)),
    );
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    return allOfArbitrary(
      [...(allOf as Schema[]), ...(Object.keys(rest).length > 0 ? [rest] : [])],
      components,
      depth + 1,
    );
  }
  if (Array.isArray(schema.type)) {
    return fc.oneof(
      ...(schema.type as string[]).map((type) => schemaArbitrary({ ...schema, type }, components, depth)),
    );
  }
  switch (schema.type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const maxLength = Math.max(
        minLength,
        Math.min(
          typeof schema.maxItems === 'number' ? schema.maxItems : MAX_ITEMS,
          depth < MAX_DEPTH ? MAX_ITEMS : minLength,
        ),
      );
      return fc.array(schemaArbitrary(schema.items as Schema | undefined, components, depth + 1), {
        minLength,
        maxLength,
      });
    }
    default:
      return schema.properties
        ? objectArbitrary(schema, components, depth)
        : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
  }
}
