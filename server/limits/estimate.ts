/**
 * What a call is expected to take, before it runs: its tokens, media units and the model whose price turns them
 * into dollars. The estimate is reserved while the call runs and replaced by the real figures when it settles,
 * so it only has to be a fair upper bound, and cheap: the input's size is read from `Content-Length` (about 4
 * bytes a token), never by serialising the body again.
 */
import type { ModelType } from '../core/models.js';

/** Output tokens reserved when the request sets no cap of its own. */
export const DEFAULT_OUTPUT_ESTIMATE = 1024;
/** Seconds reserved for a music or video request that names no duration (the built-in defaults). */
const DEFAULT_MUSIC_SECONDS = 30;
const DEFAULT_VIDEO_SECONDS = 4;
/**
 * Seconds of audio reserved for a transcription, from the request's size: 8,000 bytes a second (64 kbit/s,
 * a common bitrate for speech; WAV is denser and so over-reserved, low-bitrate Opus under-reserved until it
 * settles at the seconds decoded). The size is all there is before the audio is decoded.
 */
const TRANSCRIPTION_BYTES_PER_SECOND = 8_000;
const TRANSCRIPTION_OPERATIONS = new Set([
  'createTranscription',
  'createTranslation',
  'mcpPost:transcribe_audio',
  'invokeTranscribeAudioTool',
]);

export interface CallEstimate {
  /** The model type the operation resolves `model` as; undefined when the call has no priced model. */
  type?: ModelType;
  model?: string;
  inputTokens: number;
  outputTokens: number;
  images: number;
  characters: number;
  seconds: number;
}

type Body = Record<string, unknown>;

/** Calls estimated as a chat: input from the body's size, output from its cap. */
const CHAT_OPERATIONS = new Set([
  'createChatCompletion',
  'createResponse',
  'createMessage',
  'mcpPost:chat',
  'createSearchAnswer',
  'mcpPost:search_answer',
]);
const NOTHING: CallEstimate = { inputTokens: 0, outputTokens: 0, images: 0, characters: 0, seconds: 0 };

/** A non-negative number, or a string of digits; undefined otherwise. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? value : undefined;
  }
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) {
    return Number(value);
  }
  return undefined;
}

function numberField(body: Body, name: string): number | undefined {
  return numberOf(body[name]);
}

/** The first of the output caps the dialects name (chat, Responses, Messages) that holds a number. */
function outputCap(body: Body): number | undefined {
  return numberOf(body.max_tokens) ?? numberOf(body.max_completion_tokens) ?? numberOf(body.max_output_tokens);
}

function stringField(body: Body, name: string): string | undefined {
  const value = body[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * `operation` is the operationId, or `mcpPost:<tool>` for an MCP tool call; `bodyBytes` the request's size.
 * Operations that spend nothing (lists, lookups, files, count_tokens) estimate nothing: they count as requests.
 */
export function estimateCall(operation: string, body: unknown, bodyBytes: number): CallEstimate {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Body;
  const model = stringField(fields, 'model');
  if (CHAT_OPERATIONS.has(operation)) {
    // The hot path (every chat call of a limited key): a literal of one shape, no spread, no walk of the body.
    return {
      type: 'chat',
      model,
      inputTokens: Math.ceil(bodyBytes / 4),
      outputTokens: Math.min(outputCap(fields) ?? DEFAULT_OUTPUT_ESTIMATE, 1_000_000),
      images: 0,
      characters: 0,
      seconds: 0,
    };
  }
  const tool = operation.startsWith('mcpPost:') || operation.startsWith('invoke');
  if (operation === 'createEmbedding' || operation === 'mcpPost:embed' || operation === 'createRerank') {
    // Input tokens only (about 4 bytes a token of the body); a rerank by an embedding model is priced as that
    // model's tokens when it settles, its estimate finds no rerank price and reserves tokens alone.
    return {
      ...NOTHING,
      type: operation === 'createRerank' ? 'rerank' : 'embedding',
      model,
      inputTokens: Math.max(1, Math.ceil(bodyBytes / 4)),
    };
  }
  if (operation === 'createImage' || operation === 'mcpPost:generate_image') {
    return { ...NOTHING, type: 'image', model, images: Math.min(numberField(fields, 'n') ?? 1, 100) };
  }
  if (operation === 'createSpeech' || operation === 'mcpPost:text_to_speech') {
    return {
      ...NOTHING,
      type: 'speech',
      model,
      characters: (stringField(fields, 'input') ?? stringField(fields, 'text') ?? '').length,
    };
  }
  if (operation === 'createMusic' || operation === 'mcpPost:generate_music') {
    return { ...NOTHING, type: 'music', model, seconds: numberField(fields, 'duration') ?? DEFAULT_MUSIC_SECONDS };
  }
  if (operation === 'createVideo' || operation === 'remixVideo' || operation === 'mcpPost:create_video') {
    return { ...NOTHING, type: 'video', model, seconds: numberField(fields, 'seconds') ?? DEFAULT_VIDEO_SECONDS };
  }
  if (TRANSCRIPTION_OPERATIONS.has(operation)) {
    // A tool call's audio is base64 (4 characters for 3 bytes) or a stored file of unknown size here.
    const audioBytes = tool ? (bodyBytes * 3) / 4 : bodyBytes;
    return {
      ...NOTHING,
      type: 'transcription',
      model,
      seconds: Math.ceil(audioBytes / TRANSCRIPTION_BYTES_PER_SECOND),
    };
  }
  if (tool && !operation.endsWith('web_search') && !operation.endsWith('WebSearchTool')) {
    // image understanding and the other tools: a model call of unknown size, counted by its input
    return { ...NOTHING, inputTokens: Math.ceil(bodyBytes / 4) };
  }
  return NOTHING;
}

/** Media units of an estimate, as the daily media limit counts them (images, characters, seconds). */
export function estimatedMediaUnits(estimate: CallEstimate): number {
  return estimate.images + estimate.characters + estimate.seconds;
}
