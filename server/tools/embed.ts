/**
 * `embed`: the embeddings of `POST /v1/embeddings` (calls/embeddings/create-embeddings.ts) over MCP, vectors as
 * numbers. The built-in `local:embed` is lexical (hashed words and character trigrams), not semantic.
 */
import { z } from 'zod';
import { createEmbeddings } from '../calls/embeddings/create-embeddings.js';
import { defineTool } from './tool-definition.js';

/** Fewer texts than the REST bound (2,048): an MCP answer carries every vector twice (structured and as text). */
const MAX_TOOL_INPUTS = 256;

export const embedTool = defineTool({
  name: 'embed',
  title: 'Embed texts',
  description:
    'Turn texts into vectors with an embedding model (GET /v1/models, type embedding) and return them as numbers, one per text, in order. The built-in local:embed works offline but is lexical, not semantic: texts sharing words are close, synonyms are not.',
  input: z.object({
    input: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(MAX_TOOL_INPUTS)])
      .describe(`A text, or up to ${MAX_TOOL_INPUTS} texts, none empty.`),
    model: z
      .string()
      .min(1)
      .max(256)
      .default('local:embed')
      .describe('An embedding model id or alias of GET /v1/models.'),
    dimensions: z.number().int().min(1).max(8192).optional().describe("The vectors' length, for models that take it."),
  }),
  output: z.object({
    model: z.string(),
    embeddings: z.array(z.array(z.number())),
    dimensions: z.number().int(),
    prompt_tokens: z.number().int(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
  async run(input, { deps, scope }) {
    const made = await createEmbeddings(deps, scope, {
      model: input.model,
      input: input.input,
      encoding_format: 'float',
      ...(input.dimensions !== undefined ? { dimensions: input.dimensions } : {}),
    });
    const output = {
      model: made.model,
      embeddings: made.embeddings,
      dimensions: made.embeddings[0]?.length ?? 0,
      prompt_tokens: made.inputTokens,
    };
    return {
      output,
      text: `${made.embeddings.length} embedding(s) of ${output.dimensions} dimensions by ${made.model} (${made.inputTokens} tokens):\n${JSON.stringify(made.embeddings)}`,
    };
  },
});
