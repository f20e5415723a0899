/**
 * The fuzz requests of one operation, by kind: valid-ish requests generated from the operation's schemas,
 * the body mutations of body-mutations.ts, and request-level faults (no body, bytes that are not JSON, a
 * wrong content type or encoding, odd path segments, unknown query parameters, odd headers, methods the path
 * does not have, broken multipart).
 */
import fc from 'fast-check';
import { BODY_MUTATIONS, encodeJson, PROTOTYPE_KEYS } from './body-mutations.js';
import { printable, type RawRequest } from './raw-request.js';
import { schemaArbitrary } from './schema-arbitrary.js';
import { METHODS, type SpecOperation } from './spec-operations.js';

type Components = Parameters<typeof schemaArbitrary>[1];

/** A request before encoding: the body is still a value. */
interface Draft {
  path: string;
  query: string[];
  headers: Record<string, string>;
  body?: unknown;
}

const ODD_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%00',
  '%2F',
  '%2f..%2f',
  '%ZZ',
  '%',
  '%E2%80%AE',
  '%F0%9F%98%80',
  ';a=b',
  '~',
  '%20',
  '*',
  '__proto__',
  'constructor',
  'x'.repeat(6000),
];
const ODD_QUERY = [
  'unknown=1',
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'hasOwnProperty=1',
  'a[b][c]=d',
  'limit[]=1',
  'limit=1&limit=2',
  'order=sideways',
  'limit=-1',
  'limit=1e999',
  'limit=NaN',
  'after=',
  `after=${'x'.repeat(4000)}`,
  '%ZZ=1',
  'x=%ZZ',
  'x=%00',
  '=',
  '&&',
  `${'q'.repeat(2000)}=1`,
];
/** Values for a declared query parameter, raw on the wire: boundary numbers, bad escapes, nested forms. */
const ODD_QUERY_VALUES = ['', '-1', '0', '1e999', 'Infinity', 'NaN', '1.5', '%ZZ', '%00', 'x'.repeat(4000)];
const ODD_QUERY_FORMS = (name: string) => [
  `${name}[]=1`,
  `${name}[a]=b`,
  `${name}=1&${name}=2`,
  `${name}[__proto__]=1`,
];
const ODD_CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/json; charset=bogus',
  'application/jsonx',
  '*/*',
  ';;;',
];
const ODD_ENCODINGS = ['gzip', 'deflate', 'br', 'gzip, gzip', 'identity, gzip', 'x-unknown', 'GZIP'];

/** Header values must be printable ASCII on the wire; anything else becomes `?`. */
function headerValue(value: unknown): string {
  return String(typeof value === 'object' ? JSON.stringify(value) : value).replace(/[^\x20-\x7e]/g, '?');
}

function queryPart(name: string, value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values.map(
    (item) =>
      `${encodeURIComponent(name)}=${encodeURIComponent(typeof item === 'object' ? JSON.stringify(item) : String(item))}`,
  );
}

/** Bodies whose `model` is a model that exists here (the built-in one) get past resolution into the handlers. */
function withLocalModel(body: unknown, useLocal: boolean): unknown {
  return useLocal && typeof body === 'object' && body !== null && 'model' in body
    ? { ...body, model: 'local:chat' }
    : body;
}

function draftArbitrary(op: SpecOperation, key: string, components: Components): fc.Arbitrary<Draft> {
  const params = (where: string) => op.parameters.filter((p) => p.in === where);
  const pathValues = fc.tuple(
    ...params('path').map((p) =>
      schemaArbitrary(p.schema, components)
        .map((v) => encodeURIComponent(String(v)))
        .filter((v) => v.length > 0),
    ),
  );
  const optional = (where: string) =>
    fc.tuple(
      ...params(where).map((p) =>
        (p.required
          ? schemaArbitrary(p.schema, components)
          : fc.option(schemaArbitrary(p.schema, components), { nil: undefined })
        ).map((v) => [p.name, v] as const),
      ),
    );
  const generated = op.bodySchema ? schemaArbitrary(op.bodySchema, components) : fc.constant(undefined);
  const body = op.bodyExamples.length > 0 ? fc.oneof(fc.constantFrom(...op.bodyExamples), generated) : generated;
  return fc
    .record({ pathValues, query: optional('query'), headers: optional('header'), body, useLocal: fc.boolean() })
    .map((d) => {
      let index = 0;
      return {
        path: op.path.replace(/\{[^}]+\}/g, () => d.pathValues[index++] as string),
        query: d.query.flatMap(([name, value]) => (value === undefined ? [] : queryPart(name, value))),
        headers: {
          authorization: `Bearer ${key}`,
          ...Object.fromEntries(
            d.headers
              .filter(([, value]) => value !== undefined)
              .map(([name, value]) => [name.toLowerCase(), headerValue(value)]),
          ),
        },
        body: withLocalModel(d.body, d.useLocal),
      };
    });
}

/** A multipart/form-data body: Buffers as file parts, everything else as text fields. */
function multipart(fields: unknown, boundary: string): Buffer {
  const parts = Object.entries(typeof fields === 'object' && fields !== null ? fields : { value: fields }).map(
    ([name, value]) =>
      Buffer.isBuffer(value)
        ? Buffer.concat([
            Buffer.from(
              `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="fuzz.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
            ),
            value,
            Buffer.from('\r\n'),
          ])
        : Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${typeof value === 'string' ? value : JSON.stringify(value)}\r\n`,
          ),
  );
  return Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]);
}

/** Encodes the body as the operation's first content type says (JSON unless the operation only takes multipart). */
function encode(op: SpecOperation, kind: string, draft: Draft, overrides: Partial<RawRequest> = {}): RawRequest {
  const query = draft.query.length > 0 ? `?${draft.query.join('&')}` : '';
  const request: RawRequest = { kind, method: op.method, path: `${draft.path}${query}`, headers: { ...draft.headers } };
  if (draft.body !== undefined) {
    if (op.contentTypes[0] === 'multipart/form-data') {
      request.headers['content-type'] = 'multipart/form-data; boundary=fuzzboundary';
      request.body = multipart(draft.body, 'fuzzboundary');
    } else {
      request.headers['content-type'] = 'application/json';
      request.body = Buffer.from(encodeJson(draft.body));
    }
  }
  return printable({ ...request, ...overrides, headers: { ...request.headers, ...overrides.headers } });
}

/** The kinds that apply to an operation: body mutations need a body schema, path faults a path. */
export function kindsFor(op: SpecOperation): string[] {
  return [
    'valid-ish',
    ...(op.bodySchema ? Object.keys(BODY_MUTATIONS) : []),
    'empty-body',
    'not-json',
    'wrong-content-type',
    'bad-content-encoding',
    'odd-path',
    'unknown-query',
    ...op.parameters.filter((p) => p.in === 'query').map((p) => `query:${p.name}`),
    'odd-headers',
    'wrong-method',
    ...(op.contentTypes.includes('multipart/form-data') ? ['broken-multipart'] : []),
  ];
}

export function fuzzRequests(
  op: SpecOperation,
  kind: string,
  key: string,
  components: Components,
): fc.Arbitrary<RawRequest> {
  const drafts = draftArbitrary(op, key, components);
  const mutation = BODY_MUTATIONS[kind];
  if (mutation) {
    return drafts.chain((draft) => mutation(draft.body).map((body) => encode(op, kind, { ...draft, body })));
  }
  if (kind.startsWith('query:')) {
    // One declared query parameter, odd; the others as generated.
    const name = kind.slice('query:'.length);
    const odd = fc.oneof(
      fc.constantFrom(...ODD_QUERY_VALUES).map((value) => `${encodeURIComponent(name)}=${value}`),
      fc.constantFrom(...ODD_QUERY_FORMS(encodeURIComponent(name))),
    );
    return fc.tuple(drafts, odd).map(([draft, pair]) =>
      encode(op, kind, {
        ...draft,
        query: [...draft.query.filter((part) => !part.startsWith(`${encodeURIComponent(name)}=`)), pair],
      }),
    );
  }
  switch (kind) {
    case 'valid-ish':
      return drafts.map((draft) => encode(op, kind, draft));
    case 'empty-body':
      return fc
        .tuple(drafts, fc.constantFrom('application/json', undefined))
        .map(([draft, type]) =>
          encode(
            op,
            kind,
            { ...draft, body: undefined },
            type ? { headers: { 'content-type': type }, body: Buffer.alloc(0) } : {},
          ),
        );
    case 'not-json': {
      const text = fc.oneof(
        fc.constantFrom(
          '{',
          '{"a":1,}',
          "{'a':1}",
          'null',
          '1',
          '"text"',
          'true',
          'NaN',
          '[',
          '\uFEFF{}',
          '{"a":1}{"b":2}',
          '{"__proto__":',
        ),
        fc.string({ maxLength: 200 }),
        drafts.map((draft) => encodeJson(draft.body ?? {}).slice(0, -1)),
      );
      return fc
        .tuple(
          drafts,
          fc.oneof(
            text.map((t) => Buffer.from(t)),
            fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          ),
        )
        .map(([draft, body]) => encode(op, kind, draft, { headers: { 'content-type': 'application/json' }, body }));
    }
    case 'wrong-content-type':
      return fc.tuple(drafts, fc.constantFrom(...ODD_CONTENT_TYPES)).map(([draft, type]) =>
        encode(op, kind, draft, {
          headers: { 'content-type': type },
          body: Buffer.from(encodeJson(draft.body ?? {})),
        }),
      );
    case 'bad-content-encoding':
      // Bytes that are not what the header claims: plain JSON under gzip, br, deflate, or an unknown coding.
      return fc.tuple(drafts, fc.constantFrom(...ODD_ENCODINGS), fc.boolean()).map(([draft, encoding, plain]) =>
        encode(op, kind, draft, {
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          body: plain
            ? Buffer.from(encodeJson(draft.body ?? {}))
            : Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]),
        }),
      );
    case 'odd-path':
      return fc.tuple(drafts, fc.constantFrom(...ODD_SEGMENTS), fc.nat()).map(([draft, segment, pick]) => {
        const names = op.path.match(/\{[^}]+\}/g) ?? [];
        // With parameters, one of them is odd; without, the odd segment is appended (as a segment or glued on).
        const path =
          names.length > 0
            ? op.path.replace(/\{[^}]+\}/g, (name) => (name === names[pick % names.length] ? segment : 'x'))
            : `${op.path}${pick % 2 === 0 ? '/' : ''}${segment}`;
        return encode(op, kind, { ...draft, path });
      });
    case 'unknown-query':
      return fc
        .tuple(drafts, fc.subarray(ODD_QUERY, { minLength: 1, maxLength: 4 }))
        .map(([draft, extra]) => encode(op, kind, { ...draft, query: [...draft.query, ...extra] }));
    case 'odd-headers':
      return fc
        .tuple(
          drafts,
          fc.record(
            {
              authorization: fc.constantFrom(
                'Bearer',
                'Bearer ',
                'Basic Zm9vOmJhcg==',
                `Bearer ${'x'.repeat(4000)}`,
                'Bearer a b',
                'bearer og_nope',
              ),
              accept: fc.constantFrom('text/html', '*/*;q=0', 'application/json;q=x', 'text/event-stream', ''),
              'anthropic-version': fc.constantFrom('', 'x'.repeat(2000), '1999-01-01', PROTOTYPE_KEYS[0]),
              'x-request-id': fc.constantFrom('', '../../etc/passwd', 'x'.repeat(2000)),
              'mcp-protocol-version': fc.constantFrom('', '1999-01-01', 'x'.repeat(100)),
              'mcp-method': fc.constantFrom('', 'tools/call', PROTOTYPE_KEYS[1], 'x'.repeat(300)),
            },
            { requiredKeys: [] },
          ),
        )
        .map(([draft, headers]) => encode(op, kind, draft, { headers }));
    case 'wrong-method': {
      const others = ['OPTIONS', ...METHODS.map((m) => m.toUpperCase())].filter((m) => m !== op.method);
      return fc.tuple(drafts, fc.constantFrom(...others)).map(([draft, method]) => encode(op, kind, draft, { method }));
    }
    case 'broken-multipart':
      return fc
        .tuple(drafts, fc.constantFrom('truncated', 'no-boundary-param', 'wrong-boundary', 'no-closing'), fc.nat())
        .map(([draft, fault, cut]) => {
          const bytes = multipart(draft.body ?? {}, 'fuzzboundary');
          const body =
            fault === 'truncated'
              ? bytes.subarray(0, cut % bytes.length)
              : fault === 'no-closing'
                ? bytes.subarray(0, bytes.length - '--fuzzboundary--\r\n'.length)
                : bytes;
          const type =
            fault === 'no-boundary-param'
              ? 'multipart/form-data'
              : fault === 'wrong-boundary'
                ? 'multipart/form-data; boundary=other'
                : 'multipart/form-data; boundary=fuzzboundary';
          return encode(op, kind, draft, { headers: { 'content-type': type }, body });
        });
    default:
      throw new Error(`unknown fuzz kind ${kind}`);
  }
}
