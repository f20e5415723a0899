import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  CONTRACT_CHECKS,
  SEED_OPERATIONS,
  checkContract,
  checkSeedOperations,
  listOperations,
  type OpenApiDocument,
  type Problem,
} from './check-contract.js';

const SPEC_PATH = new URL('../../openapi/api.yaml', import.meta.url);
const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as OpenApiDocument;

function describeProblems(problems: Problem[]): string {
  return problems.map((problem) => `${problem.check} ${problem.at}: ${problem.message}`).join('\n');
}

describe('openapi/api.yaml', () => {
  it.each(SEED_OPERATIONS)('declares the seed operation %s', (seed) => {
    const labels = listOperations(spec).map((entry) => `${entry.method.toUpperCase()} ${entry.path}`);
    expect(labels).toContain(seed);
  });

  it.each(Object.keys(CONTRACT_CHECKS) as Array<keyof typeof CONTRACT_CHECKS>)('passes the %s check', (name) => {
    const problems = CONTRACT_CHECKS[name](spec);
    expect(problems, describeProblems(problems)).toEqual([]);
  });

  it('is OpenAPI 3.1 with a semver info.version of at least 1.0.0', () => {
    expect(spec.openapi).toMatch(/^3\.1\.\d+$/);
    const [major] = String((spec.info as { version: string }).version).split('.');
    expect(Number(major)).toBeGreaterThanOrEqual(1);
  });
});

/**
 * A minimal document that passes every check. It also holds the look-alikes the checks must not flag: a
 * property named `nullable`, `$defs` inside an example, a `discriminator` on a response-only schema, and a
 * binary 2xx response without an example.
 */
const VALID_MINI_DOCUMENT = `
openapi: 3.1.0
info:
  title: Mini
  version: 1.2.0
security:
  - bearerAuth: []
tags:
  - name: Things
    description: Things.
paths:
  /v1/things:
    post:
      operationId: createThing
      summary: Create a thing
      description: Creates a thing.
      tags: [Things]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: "#/components/schemas/ThingRequest"
            example:
              name: a
              nullable: true
              shape: { $defs: { A: { type: string } } }
      responses:
        "200":
          description: The thing.
          headers:
            X-Svc-Request-Id:
              $ref: "#/components/headers/RequestId"
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/Thing"
              example: { id: t1, kind: round }
        "400":
          $ref: "#/components/responses/BadRequest"
        "429":
          $ref: "#/components/responses/TooManyRequests"
  /v1/things/{id}:
    parameters:
      - $ref: "#/components/parameters/ThingId"
    get:
      operationId: downloadThing
      summary: Download a thing
      description: Returns the thing's bytes.
      tags: [Things]
      responses:
        "200":
          description: The bytes.
          headers:
            x-svc-request-id:
              $ref: "#/components/headers/RequestId"
          content:
            application/octet-stream:
              schema: { type: string, format: binary }
        "429":
          $ref: "#/components/responses/TooManyRequests"
components:
  securitySchemes:
    bearerAuth:
      type: http
      scheme: bearer
  headers:
    RequestId:
      schema: { type: string }
    RetryAfter:
      schema: { type: integer }
    RateLimit:
      schema: { type: integer }
  parameters:
    ThingId:
      name: id
      in: path
      required: true
      schema: { type: string }
  schemas:
    ThingRequest:
      type: object
      properties:
        name: { type: string }
        nullable: { type: boolean }
        shape: { type: object }
        part:
          $ref: "#/components/schemas/ThingPart"
    ThingPart:
      oneOf:
        - $ref: "#/components/schemas/RoundPart"
    RoundPart:
      type: object
      properties:
        kind: { type: string, const: round }
    Thing:
      type: object
      properties:
        id: { type: string }
        kind: { type: string }
      oneOf:
        - $ref: "#/components/schemas/RoundThing"
      discriminator:
        propertyName: kind
        mapping:
          round: "#/components/schemas/RoundThing"
    RoundThing:
      type: object
      properties:
        kind: { type: string, const: round }
    Error:
      type: object
      properties:
        message: { type: string }
  responses:
    BadRequest:
      description: Bad request.
      headers:
        x-svc-request-id:
          $ref: "#/components/headers/RequestId"
      content:
        application/json:
          schema:
            $ref: "#/components/schemas/Error"
          examples:
            missing: { value: { message: name is required } }
    TooManyRequests:
      description: Rate limited.
      headers:
        x-svc-request-id:
          $ref: "#/components/headers/RequestId"
        Retry-After:
          $ref: "#/components/headers/RetryAfter"
        x-ratelimit-limit-requests:
          $ref: "#/components/headers/RateLimit"
        x-ratelimit-remaining-requests:
          $ref: "#/components/headers/RateLimit"
        x-ratelimit-reset-requests:
          schema: { type: string }
      content:
        application/json:
          schema:
            $ref: "#/components/schemas/Error"
          example: { message: slow down }
`;

const MINI_SEEDS = ['POST /v1/things', 'GET /v1/things/{id}'];

// Loose accessors for mutating the parsed mini-document.
type Node = Record<string, any>;
const createThing = (document: Node): Node => document.paths['/v1/things'].post;
const components = (document: Node): Node => document.components;

function runChecks(document: Node): Problem[] {
  return [
    ...checkSeedOperations(document, MINI_SEEDS),
    ...Object.entries(CONTRACT_CHECKS)
      .filter(([name]) => name !== 'seedOperations')
      .flatMap(([, run]) => run(document)),
  ];
}

interface BrokenCase {
  break: (document: Node) => void;
  want: { check: string; at?: string; message?: RegExp };
}

const BROKEN_CASES: Array<[string, BrokenCase]> = [
  [
    'a seed operation is missing',
    {
      break: (document) => {
        delete document.paths['/v1/things/{id}'].get;
      },
      want: { check: 'seed-operations', at: 'GET /v1/things/{id}', message: /missing/ },
    },
  ],
  [
    'a seed request body has no schema',
    {
      break: (document) => {
        delete createThing(document).requestBody.content['application/json'].schema;
      },
      want: { check: 'seed-operations', message: /request media type application\/json has no schema/ },
    },
  ],
  [
    'a seed operation has no 2xx content',
    {
      break: (document) => {
        delete createThing(document).responses['200'].content;
      },
      want: { check: 'seed-operations', message: /no 2xx response with content/ },
    },
  ],
  [
    'a seed 2xx media type has no schema',
    {
      break: (document) => {
        delete document.paths['/v1/things/{id}'].get.responses['200'].content['application/octet-stream'].schema;
      },
      want: { check: 'seed-operations', message: /200 media type application\/octet-stream has no schema/ },
    },
  ],
  [
    'a request body has no example',
    {
      break: (document) => {
        delete createThing(document).requestBody.content['application/json'].example;
      },
      want: { check: 'examples', at: '#/paths/~1v1~1things/post/requestBody/content/application~1json' },
    },
  ],
  [
    'a 2xx JSON response has no example',
    {
      break: (document) => {
        delete createThing(document).responses['200'].content['application/json'].example;
      },
      want: { check: 'examples', at: '#/paths/~1v1~1things/post/responses/200/content/application~1json' },
    },
  ],
  [
    'a referenced error response has no example',
    {
      break: (document) => {
        delete components(document).responses.BadRequest.content['application/json'].examples;
      },
      want: { check: 'examples', at: '#/paths/~1v1~1things/post/responses/400/content/application~1json' },
    },
  ],
  [
    'an empty examples map counts as no example',
    {
      break: (document) => {
        components(document).responses.BadRequest.content['application/json'].examples = {};
      },
      want: { check: 'examples', message: /400 application\/json response has no example/ },
    },
  ],
  [
    'a referenced error response lacks x-svc-request-id',
    {
      break: (document) => {
        delete components(document).responses.BadRequest.headers['x-svc-request-id'];
      },
      want: { check: 'request-id-header', at: '#/paths/~1v1~1things/post/responses/400' },
    },
  ],
  [
    'an inline 2xx response lacks x-svc-request-id',
    {
      break: (document) => {
        delete document.paths['/v1/things/{id}'].get.responses['200'].headers;
      },
      want: { check: 'request-id-header', message: /GET \/v1\/things\/\{id\}: 200 response lacks/ },
    },
  ],
  [
    'a schema is never used',
    {
      break: (document) => {
        components(document).schemas.Orphan = { type: 'string' };
      },
      want: { check: 'unused-components', at: '#/components/schemas/Orphan' },
    },
  ],
  [
    'a schema is only used by itself',
    {
      break: (document) => {
        components(document).schemas.Loop = {
          type: 'object',
          properties: { next: { $ref: '#/components/schemas/Loop' } },
        };
      },
      want: { check: 'unused-components', at: '#/components/schemas/Loop' },
    },
  ],
  [
    'a response is never used',
    {
      break: (document) => {
        components(document).responses.Gone = { description: 'Gone.' };
      },
      want: { check: 'unused-components', at: '#/components/responses/Gone' },
    },
  ],
  [
    'a parameter is never used',
    {
      break: (document) => {
        components(document).parameters.Limit = { name: 'limit', in: 'query', schema: { type: 'integer' } };
      },
      want: { check: 'unused-components', at: '#/components/parameters/Limit' },
    },
  ],
  [
    'a header is never used',
    {
      break: (document) => {
        components(document).headers.Unused = { schema: { type: 'string' } };
      },
      want: { check: 'unused-components', at: '#/components/headers/Unused' },
    },
  ],
  [
    'a security scheme is never required',
    {
      break: (document) => {
        components(document).securitySchemes.apiKey = { type: 'apiKey', in: 'header', name: 'x-api-key' };
      },
      want: { check: 'unused-components', at: '#/components/securitySchemes/apiKey' },
    },
  ],
  [
    'an operationId is used twice',
    {
      break: (document) => {
        document.paths['/v1/things/{id}'].get.operationId = 'createThing';
      },
      want: { check: 'operation-ids', message: /operationId createThing is used by POST \/v1\/things and GET/ },
    },
  ],
  [
    'an operation has no operationId',
    {
      break: (document) => {
        delete createThing(document).operationId;
      },
      want: { check: 'operation-ids', message: /POST \/v1\/things has no operationId/ },
    },
  ],
  [
    'a 429 lacks Retry-After',
    {
      break: (document) => {
        delete components(document).responses.TooManyRequests.headers['Retry-After'];
      },
      want: { check: 'rate-limit-headers', message: /429 response lacks retry-after$/ },
    },
  ],
  [
    'a 429 lacks the x-ratelimit headers',
    {
      break: (document) => {
        const headers = components(document).responses.TooManyRequests.headers;
        delete headers['x-ratelimit-limit-requests'];
        delete headers['x-ratelimit-reset-requests'];
      },
      want: { check: 'rate-limit-headers', message: /lacks x-ratelimit-limit-requests, x-ratelimit-reset-requests/ },
    },
  ],
  [
    'an inline 429 has no headers at all',
    {
      break: (document) => {
        createThing(document).responses['429'] = {
          description: 'Slow down.',
          headers: { 'x-svc-request-id': { schema: { type: 'string' } } },
        };
      },
      want: { check: 'rate-limit-headers', at: '#/paths/~1v1~1things/post/responses/429' },
    },
  ],
  [
    'a schema uses $defs',
    {
      break: (document) => {
        components(document).schemas.Thing.$defs = { Id: { type: 'string' } };
      },
      want: { check: 'forbidden-keywords', at: '#/components/schemas/Thing/$defs' },
    },
  ],
  [
    'a property schema uses nullable',
    {
      break: (document) => {
        components(document).schemas.Error.properties.message.nullable = true;
      },
      want: { check: 'forbidden-keywords', at: '#/components/schemas/Error/properties/message/nullable' },
    },
  ],
  [
    'a schema reached from a request body uses discriminator',
    {
      break: (document) => {
        components(document).schemas.ThingPart.discriminator = { propertyName: 'kind' };
      },
      want: { check: 'request-discriminator', at: '#/components/schemas/ThingPart/discriminator' },
    },
  ],
  [
    'an inline request schema uses discriminator',
    {
      break: (document) => {
        createThing(document).requestBody.content['application/json'].schema = {
          oneOf: [{ $ref: '#/components/schemas/ThingRequest' }],
          discriminator: { propertyName: 'name' },
        };
      },
      want: {
        check: 'request-discriminator',
        at: '#/paths/~1v1~1things/post/requestBody/content/application~1json/schema/discriminator',
      },
    },
  ],
  [
    'info.version is not semver',
    {
      break: (document) => {
        document.info.version = 'v1';
      },
      want: { check: 'info-version', message: /not a semver/ },
    },
  ],
  [
    'info.version is below 1.0.0',
    {
      break: (document) => {
        document.info.version = '0.9.3';
      },
      want: { check: 'info-version', message: /below 1\.0\.0/ },
    },
  ],
  [
    'an operation has no summary',
    {
      break: (document) => {
        delete createThing(document).summary;
      },
      want: { check: 'operation-docs', message: /has no summary/ },
    },
  ],
  [
    'an operation has a blank description',
    {
      break: (document) => {
        createThing(document).description = '  ';
      },
      want: { check: 'operation-docs', message: /has no description/ },
    },
  ],
  [
    'an operation has no tags',
    {
      break: (document) => {
        delete createThing(document).tags;
      },
      want: { check: 'operation-docs', message: /has no tags/ },
    },
  ],
  [
    'an operation uses an undeclared tag',
    {
      break: (document) => {
        createThing(document).tags = ['Widgets'];
      },
      want: { check: 'operation-docs', message: /undeclared tag Widgets/ },
    },
  ],
];

describe('the contract checker', () => {
  it('finds nothing wrong with a valid mini-document, look-alikes included', () => {
    const problems = runChecks(parse(VALID_MINI_DOCUMENT));
    expect(problems, describeProblems(problems)).toEqual([]);
  });

  it.each(BROKEN_CASES)('reports it when %s', (_name, { break: breakDocument, want }) => {
    const document = parse(VALID_MINI_DOCUMENT) as Node;
    breakDocument(document);
    const problems = runChecks(document);
    const matching = problems.filter(
      (problem) =>
        problem.check === want.check &&
        (want.at === undefined || problem.at === want.at) &&
        (want.message === undefined || want.message.test(problem.message)),
    );
    expect(
      matching,
      `wanted ${JSON.stringify({ ...want, message: want.message?.source })}, got:\n${describeProblems(problems)}`,
    ).not.toEqual([]);
  });

  it('reports a missing real seed operation through checkContract', () => {
    const document = structuredClone(spec) as Node;
    delete document.paths['/v1/files/{id}'].delete;
    const problems = checkContract(document);
    expect(problems).toContainEqual({
      check: 'seed-operations',
      at: 'DELETE /v1/files/{id}',
      message: 'seed operation is missing',
    });
  });
});
