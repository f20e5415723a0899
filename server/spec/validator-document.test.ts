/**
 * The validator's copy of the contract accepts and refuses exactly what the contract does, with the same first
 * error, and checks a large accepted body in a fraction of the contract's time. Both documents are compiled by
 * express-openapi-validator's own Ajv factory and options, and its own error mapping.
 */
import fc from 'fast-check';
import { createRequestAjv } from 'express-openapi-validator/dist/framework/ajv/index.js';
import { AjvOptions } from 'express-openapi-validator/dist/framework/ajv/options.js';
import { ajvErrorsToValidatorError, augmentAjvErrors } from 'express-openapi-validator/dist/middlewares/util.js';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { BODY_MUTATIONS, encodeJson } from '../../test/fuzz/body-mutations.js';
import { schemaArbitrary } from '../../test/fuzz/schema-arbitrary.js';
import { loadSpec, type OpenApiDocument } from './load-spec.js';
import {
  atLeastCodePoints,
  atMostCodePoints,
  FAST_PREFIX,
  restoreLengthBoundErrors,
  type StringFormat,
  validatorDocument,
} from './validator-document.js';

type Schema = Record<string, any>;

const contract = loadSpec().document;
const copy = validatorDocument(contract);

/** Ajv's own count (ucs2length): a lone surrogate is one code point. */
function ajvLength(value: string): number {
  let length = 0;
  for (let pos = 0; pos < value.length; length++) {
    const unit = value.charCodeAt(pos++);
    if (unit >= 0xd800 && unit <= 0xdbff && pos < value.length && (value.charCodeAt(pos) & 0xfc00) === 0xdc00) {
      pos++;
    }
  }
  return length;
}

function bodyValidator(document: OpenApiDocument, schema: unknown, formats: Record<string, StringFormat>) {
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

/** What the error envelope is made of: the validity, the first error, and a maxItems error at its path. */
function verdict(validate: ValidateFunction, body: unknown) {
  if (validate({ body })) {
    return { valid: true };
  }
  const mapped = ajvErrorsToValidatorError(400, augmentAjvErrors(validate.errors ?? []) as never) as {
    errors: Array<{ path: string; message: string; errorCode?: string }>;
  };
  restoreLengthBoundErrors(mapped);
  const [first] = mapped.errors;
  const overItems = mapped.errors.find(
    (error) => error.errorCode === 'maxItems.openapi.validation' && error.path === first?.path,
  );
  return { valid: false, first, overItems: overItems?.message };
}

/** Every JSON request body of the contract, by operation. */
function jsonBodies(document: OpenApiDocument): Array<[string, unknown]> {
  const bodies: Array<[string, unknown]> = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      const schema = (operation as Schema)?.requestBody?.content?.['application/json']?.schema;
      if (schema) {
        bodies.push([`${method.toUpperCase()} ${path}`, schema]);
      }
    }
  }
  return bodies;
}

describe('length bounds from .length', () => {
  const samples = [
    '',
    'a',
    'abcd',
    '😀',
    '😀😀',
    'a😀',
    '\uD800',
    '\uDC00\uD800',
    '😀'.repeat(3),
    `${'😀'.repeat(2)}ab`,
    'é'.repeat(5),
    `\uD83D${'x'.repeat(3)}`,
  ];
  it('agree with Ajv counting code points, at every bound around the length', () => {
    for (const value of samples) {
      for (let bound = 0; bound <= value.length + 2; bound++) {
        expect(atMostCodePoints(value, bound), `${JSON.stringify(value)} max ${bound}`).toBe(
          ajvLength(value) <= bound,
        );
        expect(atLeastCodePoints(value, bound), `${JSON.stringify(value)} min ${bound}`).toBe(
          ajvLength(value) >= bound,
        );
      }
    }
  });
});

describe("the validator's copy of the contract", () => {
  it('leaves the contract as written and takes none of its names', () => {
    const before = JSON.stringify(loadSpec().document);
    validatorDocument(loadSpec().document);
    expect(JSON.stringify(contract)).toBe(before);
    expect(Object.keys(contract.components?.schemas ?? {}).some((name) => name.startsWith(FAST_PREFIX))).toBe(false);
  });

  it('has no maxLength/minLength left, and switches for the tagged unions a large body repeats', () => {
    const text = JSON.stringify(copy.document);
    expect(text).not.toMatch(/"(maxLength|minLength)":\d/);
    const schemas = copy.document.components?.schemas as Record<string, Schema>;
    for (const name of ['ChatUserContentPart', 'ChatMessage', 'AnthropicContentBlockParam', 'ResponseInputContentPart']) {
      expect(schemas[name]?.if, name).toBeDefined();
      expect(schemas[name]?.else?.oneOf, name).toEqual((contract.components?.schemas as Record<string, Schema>)[name].oneOf);
      expect(schemas[`${FAST_PREFIX}${name}`], name).toBeDefined();
    }
    // The response unions the spec marks with a discriminator are switched too.
    expect(schemas.ResponseOutputItem?.if).toBeDefined();
    expect(schemas.ResponseOutputItem?.else?.discriminator).toBeDefined();
  });

  it('gives each call its own copy (the validator changes the document it is given)', () => {
    expect(validatorDocument(contract).document).not.toBe(validatorDocument(contract).document);
  });

  const bodies = jsonBodies(contract);
  const copyBodies = new Map(jsonBodies(copy.document));
  it.each(bodies)('%s: same verdict and first error for generated and broken bodies', (name, schema) => {
    const original = bodyValidator(contract, schema, {});
    const rewritten = bodyValidator(copy.document, copyBodies.get(name), copy.formats);
    const components = contract.components as never;
    const body = schemaArbitrary(schema as Schema, components);
    const mutated = fc.oneof(
      body,
      body.chain((value) => fc.oneof(...Object.values(BODY_MUTATIONS).map((mutation) => mutation(value)))),
    );
    fc.assert(
      fc.property(mutated, (value) => {
        const parsed = JSON.parse(encodeJson(value));
        expect(verdict(rewritten, parsed)).toEqual(verdict(original, parsed));
      }),
      { numRuns: 60 },
    );
  });

  it('refuses over-long and empty strings with the messages of maxLength and minLength', () => {
    const schema = jsonBodies(contract).find(([name]) => name === 'POST /v1/chat/completions')?.[1];
    const original = bodyValidator(contract, schema, {});
    const rewritten = bodyValidator(copy.document, copyBodies.get('POST /v1/chat/completions'), copy.formats);
    const messages = [{ role: 'user', content: 'hi' }];
    for (const model of ['', 'm'.repeat(257), '😀'.repeat(256), '😀'.repeat(257), 'x'.repeat(1 << 20)]) {
      expect(verdict(rewritten, { model, messages }), model.slice(0, 20)).toEqual(
        verdict(original, { model, messages }),
      );
    }
    expect(verdict(rewritten, { model: 'm'.repeat(257), messages }).first?.message).toBe(
      'must NOT have more than 256 characters',
    );
  });

  it('checks a large accepted body in a fraction of the CPU time of the contract as written', () => {
    const schema = jsonBodies(contract).find(([name]) => name === 'POST /anthropic/v1/messages')?.[1];
    const original = bodyValidator(contract, schema, {});
    const rewritten = bodyValidator(copy.document, copyBodies.get('POST /anthropic/v1/messages'), copy.formats);
    const blocks = Array.from({ length: 1000 }, () => ({ type: 'text', text: 'x' }));
    const body = {
      model: 'local:chat',
      max_tokens: 8,
      messages: Array.from({ length: 20 }, () => ({ role: 'user', content: blocks })),
    };
    const cpu = (validate: ValidateFunction) => {
      expect(validate({ body })).toBe(true);
      const start = process.cpuUsage();
      for (let run = 0; run < 5; run++) {
        validate({ body });
      }
      const used = process.cpuUsage(start);
      return used.user + used.system;
    };
    const before = cpu(original);
    const after = cpu(rewritten);
    expect(after, `rewritten ${after} µs vs contract ${before} µs`).toBeLessThan(before / 3);
  });
});
