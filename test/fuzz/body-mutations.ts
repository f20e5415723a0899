/**
 * Mutations of a JSON body: each takes a valid-ish body and breaks it in one way at a random place (the top
 * level included), and `encodeJson` writes the result, with raw number tokens JSON.stringify cannot produce
 * (`1e999`, 30-digit integers).
 */
import fc from 'fast-check';

type Json = unknown;
type Path = Array<string | number>;

/** Text spliced into the JSON as is, for numbers JavaScript cannot hold. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Keys that are properties of every object: code that indexes a plain object with them finds a function. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'valueOf',
  'toString',
  'isPrototypeOf',
  '__defineGetter__',
  'prototype',
];

const BOUNDARY_NUMBERS: Json[] = [
  0,
  -1,
  -0.5,
  0.5,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53 + 1,
  -(2 ** 63),
  1e308,
  -1e308,
  5e-324,
  new RawJson('1e999'),
  new RawJson('-1e999'),
  new RawJson('123456789012345678901234567890'),
  new RawJson('1E-400'),
  'NaN',
  'Infinity',
  '-1',
  '1e999',
  '0x10',
  '',
];

const OTHER_TYPES: Json[] = [42, -1, 1.5, 'text', '', true, false, null, [], {}, [1, 'a', null], { a: 1 }];

function isObject(value: Json): value is Record<string, Json> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof RawJson) &&
    !Buffer.isBuffer(value)
  );
}

/** Every place in `value`, the root (`[]`) first. */
function pathsOf(value: Json, prefix: Path = []): Path[] {
  const children = Array.isArray(value)
    ? value.map((item, index) => pathsOf(item, [...prefix, index]))
    : isObject(value)
      ? Object.keys(value).map((key) => pathsOf(value[key], [...prefix, key]))
      : [];
  return [prefix, ...children.flat()];
}

function getAt(value: Json, path: Path): Json {
  return path.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key], value);
}

/**
 * A copy of `value` with `path` set to `replacement` (or deleted when `replacement` is `undefined`). Keys are
 * defined, not assigned, so `__proto__` becomes an own key that JSON.stringify writes.
 */
function updateAt(value: Json, path: Path, replacement: Json | undefined): Json {
  if (path.length === 0) {
    return replacement;
  }
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, Json>;
  const next = rest.length === 0 ? replacement : updateAt(copy[head], rest, replacement);
  if (next === undefined) {
    if (Array.isArray(copy)) {
      (copy as Json[]).splice(head as number, 1);
    } else {
      delete copy[head];
    }
  } else {
    Object.defineProperty(copy, head, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** Picks a place in the body; `filter` narrows the choice when any place qualifies. */
function somePlace(body: Json, pick: number, filter: (node: Json, path: Path) => boolean = () => true): Path {
  const all = pathsOf(body);
  const fitting = all.filter((path) => filter(getAt(body, path), path));
  const from = fitting.length > 0 ? fitting : all;
  return from[pick % from.length];
}

function nested(depth: number, asArray: boolean): RawJson {
  return new RawJson(
    asArray ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );
}

function hugeString(length: number, unit: string): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

export type BodyMutation = (body: Json) => fc.Arbitrary<Json>;

export const BODY_MUTATIONS: Record<string, BodyMutation> = {
  'wrong-type': (body) =>
    fc.tuple(fc.nat(), fc.constantFrom(...OTHER_TYPES)).map(([pick, other]) => {
      const path = somePlace(
        body,
        pick,
        (node) => typeof node !== typeof other || Array.isArray(node) !== Array.isArray(other),
      );
      return updateAt(body, path, other);
    }),
  'missing-field': (body) =>
    fc.nat().map((pick) => {
      const path = somePlace(body, pick, (_node, candidate) => candidate.length > 0);
      return path.length === 0 ? {} : updateAt(body, path, undefined);
    }),
  'unknown-field': (body) =>
    fc
      .tuple(
        fc.nat(),
        fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('unknown_field', '', ' ', 'a.b', '$ref', 'x-extra')),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([pick, key, value]) => {
        const path = somePlace(body, pick, isObject);
        return isObject(getAt(body, path))
          ? updateAt(body, [...path, key], value)
          : { ...(body as object), [key]: value };
      }),
  'prototype-key': (body) =>
    fc
      .tuple(
        fc.nat(),
        fc.constantFrom(...PROTOTYPE_KEYS),
        fc.constantFrom<Json>({}, { polluted: true }, 1, 'x', null, []),
      )
      .map(([pick, key, value]) => {
        const path = somePlace(body, pick, isObject);
        return updateAt(body, isObject(getAt(body, path)) ? [...path, key] : [key], value);
      }),
  // Bounded at 16 KiB so a few hundred of them stay fast; the body limit has its own test.
  'huge-string': (body) =>
    fc
      .tuple(
        fc.nat(),
        fc.integer({ min: 4096, max: 16_384 }),
        fc.constantFrom('x', 'é', '😀', 'lorem ipsum ', '\\"', '\u0000', '<script>'),
      )
      .map(([pick, length, unit]) =>
        updateAt(
          body,
          somePlace(body, pick, (node) => typeof node === 'string'),
          hugeString(length, unit),
        ),
      ),
  'boundary-number': (body) =>
    fc.tuple(fc.nat(), fc.constantFrom(...BOUNDARY_NUMBERS)).map(([pick, number]) =>
      updateAt(
        body,
        somePlace(body, pick, (node) => typeof node === 'number'),
        number,
      ),
    ),
  'deep-nesting': (body) =>
    fc
      .tuple(fc.nat(), fc.integer({ min: 200, max: 800 }), fc.boolean())
      .map(([pick, depth, asArray]) => updateAt(body, somePlace(body, pick), nested(depth, asArray))),
};

/** JSON text of a body: Buffers as base64, RawJson spliced in verbatim. */
export function encodeJson(body: Json): string {
  const raw: string[] = [];
  const text = JSON.stringify(body, function (this: Record<string, unknown>, key, value: unknown) {
    const original = this[key];
    if (Buffer.isBuffer(original)) {
      return original.toString('base64');
    }
    if (original instanceof RawJson) {
      raw.push(original.text);
      return `@@raw${raw.length - 1}@@`;
    }
    return value;
  });
  return (text ?? '').replace(/"@@raw(\d+)@@"/g, (_match, index: string) => raw[Number(index)]);
}
