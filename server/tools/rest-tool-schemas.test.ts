// The tools served over REST (routes/tools.ts) validate their input with their own zod schema after the
// contract's validator has read the body, and answer their output as the contract's response. The two must
// agree, or a body the contract accepts is refused by the tool (or an answer the tool makes fails the
// contract): every constraint of each property is compared, after resolving the contract's $refs.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadSpec } from '../spec/load-spec.js';
import { imageUnderstandingTool } from './image-understanding.js';
import type { Tool } from './tool-definition.js';
import { transcribeAudioTool } from './transcribe-audio.js';
import { webSearchTool } from './web-search.js';

type Schema = Record<string, unknown>;
const document = loadSpec().document as unknown as { components: { schemas: Record<string, Schema> } };

/** The schema with every `$ref` replaced by its target (siblings of a `$ref`, such as a description, kept). */
function resolve(schema: unknown): unknown {
  if (Array.isArray(schema)) {
    return schema.map(resolve);
  }
  if (typeof schema !== 'object' || schema === null) {
    return schema;
  }
  const { $ref, ...rest } = schema as Schema;
  const target =
    typeof $ref === 'string' ? resolve(document.components.schemas[$ref.replace('#/components/schemas/', '')]) : {};
  return {
    ...(target as Schema),
    ...Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, resolve(value)])),
  };
}

/** What a schema constrains, without its prose; nullable as the contract writes it (`type: [x, 'null']`). */
const CONSTRAINTS = [
  'type',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'enum',
  'pattern',
  'minItems',
  'maxItems',
  'items',
  'required',
  'additionalProperties',
  'properties',
  'const',
];
function constraints(schema: unknown, keys = CONSTRAINTS): unknown {
  if (typeof schema !== 'object' || schema === null) {
    return schema;
  }
  const out: Schema = {};
  for (const key of keys) {
    const value = (schema as Schema)[key];
    if (value === undefined) {
      continue;
    }
    if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Schema).map(([name, property]) => [name, constraints(property, keys)]),
      );
    } else if (key === 'items') {
      out[key] = constraints(value, keys);
    } else if (key === 'pattern') {
      out[key] = new RegExp(value as string).source;
    } else if (key === 'required' || key === 'enum') {
      out[key] = [...(value as unknown[])].sort();
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * An output is compared by its shape (names, types, required, enums): its bounds are the contract's to check
 * (the response validator does, on every answer), and zod writes an integer's safe-integer range into each.
 */
const SHAPE = ['type', 'enum', 'items', 'required', 'additionalProperties', 'properties', 'const'];
const zodSchema = (schema: z.ZodType, keys = CONSTRAINTS) => constraints(z.toJSONSchema(schema), keys);
/**
 * An input as a caller writes it: a field with a default may be left out (zod's `input` view), the rest as zod
 * checks it (its `input` view leaves `additionalProperties` open, which the tool does not).
 */
function zodInputSchema(schema: z.ZodType): unknown {
  const checked = zodSchema(schema) as Schema;
  const { required } = z.toJSONSchema(schema, { io: 'input' }) as Schema;
  const { required: _ignored, ...rest } = checked;
  return constraints({ ...rest, ...(required ? { required } : {}) });
}
const contractSchema = (name: string, keys = CONSTRAINTS) =>
  constraints(resolve(document.components.schemas[name]), keys);

describe('the zod schemas of the REST tools agree with the contract', () => {
  const cases: Array<[string, Tool, string]> = [
    ['web_search', webSearchTool as unknown as Tool, 'WebSearchToolRequest'],
    ['image_understanding', imageUnderstandingTool as unknown as Tool, 'ImageUnderstandingRequest'],
    ['transcribe_audio', transcribeAudioTool as unknown as Tool, 'TranscribeAudioToolRequest'],
  ];
  for (const [name, tool, request] of cases) {
    it(`${name}: its input is the contract's ${request}, property by property`, () => {
      const contract = contractSchema(request) as Schema;
      expect(Object.keys(contract.properties as Schema).length).toBeGreaterThan(3);
      expect(zodInputSchema(tool.input)).toEqual(contract);
    });
  }

  it("image_understanding: its output has the shape of the contract's ImageUnderstandingResponse (the route answers it as is)", () => {
    expect(zodSchema(imageUnderstandingTool.output, SHAPE)).toEqual(
      contractSchema('ImageUnderstandingResponse', SHAPE),
    );
  });

  it("web_search: its output has the shape of the `output` of the contract's WebSearchToolResponse", () => {
    const response = contractSchema('WebSearchToolResponse', SHAPE) as { properties: Schema };
    expect(response.properties.output).toBeDefined();
    expect(zodSchema(webSearchTool.output, SHAPE)).toEqual(response.properties.output);
  });

  it("transcribe_audio: its output has the shape of the `output` of the contract's TranscribeAudioToolResponse", () => {
    const response = contractSchema('TranscribeAudioToolResponse', SHAPE) as { properties: Schema };
    expect(response.properties.output).toBeDefined();
    expect(zodSchema(transcribeAudioTool.output, SHAPE)).toEqual(response.properties.output);
  });
});
