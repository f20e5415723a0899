/**
 * The built-in embedding model `local:embed`: the LEXICAL reference embedder of engines/embed/lexical-embed.ts
 * (hashed words, word pairs and character trigrams, L2-normalised) — not a semantic model. Its vectors are
 * made in a media worker under the caller's key (one pool slot per call), never on the event loop; the tokens
 * of each text are counted with the o200k tokenizer on its own thread meanwhile, for usage and the per-input
 * limit.
 */
import { ApiError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { EmbeddingCallOptions, EmbeddingModel } from '../../core/models.js';
import { LEXICAL_DEFAULT_DIMENSIONS, LEXICAL_MAX_DIMENSIONS } from '../../engines/embed/lexical-embed.js';
import type { MediaPool } from '../../engines/media-pool.js';
import { countTextTokens } from '../../tokens/tokenizer.js';

/** Tokens one input may hold (OpenAI's bound for its embedding models). */
export const LOCAL_EMBED_MAX_INPUT_TOKENS = 8192;

export function createLocalEmbeddingModel(pool: MediaPool): EmbeddingModel {
  return {
    provider: 'local',
    modelId: 'embed',
    async embed(options: EmbeddingCallOptions, context: CallContext) {
      const dimensions = options.dimensions ?? LEXICAL_DEFAULT_DIMENSIONS;
      if (dimensions < 1 || dimensions > LEXICAL_MAX_DIMENSIONS) {
        throw new ApiError(400, `dimensions: local:embed makes vectors of 1 to ${LEXICAL_MAX_DIMENSIONS} dimensions.`, {
          code: 'invalid_value',
          param: 'dimensions',
        });
      }
      for (const field of Object.keys(options.extra)) {
        context.warn({ field, reason: 'the built-in lexical embedder takes no such setting' });
      }
      const counted = Promise.all(
        options.inputs.map((input) => (typeof input === 'string' ? countTextTokens(input) : input.length)),
      );
      const made = pool.use(context.signal, (slot) => slot.run('embed', { inputs: options.inputs, dimensions }), {
        owner: context.owner,
      });
      // Both run at once; a refusal by count must not leave the embedding's rejection unheard.
      made.catch(() => undefined);
      const tokens = await counted;
      const over = tokens.findIndex((count) => count > LOCAL_EMBED_MAX_INPUT_TOKENS);
      if (over >= 0) {
        const param = options.single ? 'input' : `input.${over}`;
        throw new ApiError(
          400,
          `${param} has ${tokens[over]} tokens; local:embed takes at most ${LOCAL_EMBED_MAX_INPUT_TOKENS} an input.`,
          { code: 'context_length_exceeded', param },
        );
      }
      const { vectors } = await made;
      return { embeddings: vectors, usage: { inputTokens: tokens.reduce((sum, count) => sum + count, 0) } };
    },
  };
}
