/**
 * The validator's copy of the contract accepts and refuses exactly what the contract does, with the same first
 * error, and checks a large accepted body in a fraction of the contract's time. Both documents are compiled by
 * express-openapi-validator's own Ajv factory and options, and its own error mapping.
 */
import fc from 'fast-check';
import { ajvErrorsToValidatorError, augmentAjvErrors } from 'express-openapi-validator/dist/middlewares/util.js';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { BODY_MUTATIONS, encodeJson } from '../../test/fuzz/body-mutations.js';
import { schemaArbitrary } from '../../test/fuzz/schema-arbitrary.js';
import { bodyValidator, jsonBodySchemas } from '../../test/helpers/body-validator.js';
import { loadSpec } from './load-spec.js';
import {
  atLeastCodePoints,
  atMostCodePoints,
  FAST_PREFIX,
  restoreLengthBoundErrors,
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
        expect(atMostCodePoints(value, bound), `${JSON.stringify(value)} max ${bound}`).toBe(ajvLength(value) <= bound);
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
    const schemas = copy.document.components?.schemas as Record<string, Schema>;
    // Parameters (short URL and query strings) keep theirs; every schema a body can reach is rewritten.
    const left = JSON.stringify(schemas).match(/"(maxLength|minLength)":\d+/g);
    expect(left).toBeNull();
    for (const name of [
      'ChatUserContentPart',
      'ChatMessage',
      'AnthropicContentBlockParam',
      'ResponseInputContentPart',
    ]) {
      expect(schemas[name]?.if, name).toBeDefined();
      expect(schemas[name]?.else?.oneOf, name).toEqual(
        (contract.components?.schemas as Record<string, Schema>)[name].oneOf,
      );
    }
    // The switches select fast copies of the branches.
    for (const name of ['ChatUserMessage', 'ChatContentPartText', 'AnthropicTextBlockParam', 'ResponseInputTextPart']) {
      expect(schemas[`${FAST_PREFIX}${name}`], name).toBeDefined();
    }
    // The response unions the spec marks with a discriminator are switched too.
    expect(schemas.ResponseOutputItem?.if).toBeDefined();
    expect(schemas.ResponseOutputItem?.else?.discriminator).toBeDefined();
  });

  it('gives each call its own copy (the validator changes the document it is given)', () => {
    expect(validatorDocument(contract).document).not.toBe(validatorDocument(contract).document);
  });

  const bodies = [...jsonBodySchemas(contract)];
  const copyBodies = jsonBodySchemas(copy.document);
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
    const schema = jsonBodySchemas(contract).get('POST /v1/chat/completions');
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
    const schema = jsonBodySchemas(contract).get('POST /anthropic/v1/messages');
    const original = bodyValidator(contract, schema, {});
    const rewritten = bodyValidator(copy.document, copyBodies.get('POST /anthropic/v1/messages'), copy.formats);
    const blocks = Array.from({ length: 1000 }, () => ({ type: 'text', text: 'x' }));
    const body = {
      model: 'local:chat',
      max_tokens: 8,
      messages: Array.from({ length: 20 }, () => ({ role: 'user', content: blocks })),
    };
    const cpu = (validate: ValidateFunction) => {
      // Warmed until V8 has optimised the generated code of both, then measured.
      for (let run = 0; run < 20; run++) {
        expect(validate({ body })).toBe(true);
      }
      const start = process.cpuUsage();
      for (let run = 0; run < 20; run++) {
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
