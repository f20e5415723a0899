/**
 * OpenAI's embeddings request (`POST /v1/embeddings`) into `EmbeddingCallOptions`. The contract's validator has
 * checked the shape; this checks again what a caller outside HTTP (the `embed` tool) could still send — no
 * inputs, an empty text or token array, more than MAX_EMBEDDING_INPUTS — each a 400 naming the input.
 */
import { ApiError } from '../../core/api-error.js';
import type { EmbeddingCallOptions, EmbeddingInput } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

export type EmbeddingRequestBody = components['schemas']['EmbeddingRequest'];

/** OpenAI's own bound on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

const KNOWN = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);

function badInput(message: string, param: string): ApiError {
  return new ApiError(400, message, { code: 'invalid_input', param });
}

function isTokenArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((token) => Number.isInteger(token) && (token as number) >= 0);
}

export function decodeEmbeddingRequest(body: EmbeddingRequestBody): EmbeddingCallOptions {
  const raw: unknown = body.input;
  let inputs: EmbeddingInput[];
  let single: boolean;
  if (typeof raw === 'string') {
    inputs = [raw];
    single = true;
  } else if (Array.isArray(raw) && raw.length > 0 && typeof raw[0] === 'number') {
    if (!isTokenArray(raw)) {
      throw badInput('input: token ids are whole numbers of 0 or more.', 'input');
    }
    inputs = [raw];
    single = true;
  } else if (Array.isArray(raw)) {
    inputs = raw as EmbeddingInput[];
    single = false;
  } else {
    throw badInput('input must be a string, an array of strings, or token ids.', 'input');
  }
  if (inputs.length === 0) {
    throw badInput('input is empty: give at least one text to embed.', 'input');
  }
  if (inputs.length > MAX_EMBEDDING_INPUTS) {
    throw badInput(
      `input has ${inputs.length} items; at most ${MAX_EMBEDDING_INPUTS} are embedded per request.`,
      'input',
    );
  }
  inputs.forEach((input, index) => {
    const param = single ? 'input' : `input.${index}`;
    if (typeof input === 'string' ? input.length === 0 : !isTokenArray(input)) {
      throw badInput(`${param} must be a non-empty string or an array of token ids.`, param);
    }
    if (input.length === 0) {
      throw badInput(`${param} is empty: an empty text has no embedding.`, param);
    }
  });
  const extra = Object.fromEntries(Object.entries(body).filter(([name]) => !KNOWN.has(name)));
  return {
    inputs,
    single,
    dimensions: body.dimensions,
    encodingFormat: body.encoding_format ?? 'float',
    ...(body.user !== undefined ? { user: body.user } : {}),
    extra,
  };
}
