/**
 * One small interface per capability (as the Vercel AI SDK does: `ImageModel`, `SpeechModel`, …), the map
 * from a model `type` to its interface, and what a provider hands the registry. A provider offers only the
 * capabilities it has; the registry resolves a model of any type and gives the caller the right interface.
 *
 * Chat is complete (`chat.ts`). The media, video and search interfaces are the house their issues build in:
 * each is the one-call shape the conventions describe, with options already validated and decoded from the
 * wire, results in canonical form (bytes and a media type, never a URL of an upstream), and usage in that
 * capability's own units.
 */
import type { CallContext } from './call-context.js';
import type { ChatModel } from './chat.js';

/** Every model type the configuration may declare; the registry keys models by it. */
export const MODEL_TYPES = [
  'chat',
  'image',
  'video',
  'speech',
  'music',
  'search',
  'vision',
  'embedding',
  'rerank',
  // speech-to-text (issue 34)
  'transcription',
] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

/** What a media call produced, in its modality's own units (recorded per call, shown by `GET /v1/usage`). */
export interface MediaUsage {
  images?: number;
  pixels?: number;
  characters?: number;
  seconds?: number;
  /** Bytes uploaded and stored (file uploads). */
  bytes?: number;
  /** Searches run (web search, search answers). */
  queries?: number;
  /** Results those searches returned. */
  results?: number;
}

/** Bytes of one generated medium, with the media type that names their format. */
export interface GeneratedMedia {
  data: Uint8Array;
  mediaType: string;
}

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export interface ImageCallOptions {
  prompt: string;
  /** How many images, each distinct. */
  n: number;
  /** The pixel size; both undefined lets the model pick its default. */
  width?: number;
  height?: number;
  seed?: number;
  outputFormat: ImageFormat;
  /** 0–100 for jpeg and webp (100 = best). */
  outputCompression?: number;
  /** OpenAI's settings, passed to upstreams that take them; the built-in engine has no use for them. */
  quality?: string;
  style?: string;
  background?: string;
  moderation?: string;
  user?: string;
}

export interface ImageResult {
  images: GeneratedMedia[];
  width: number;
  height: number;
  /** The prompt the model really used, when it rewrote the caller's. */
  revisedPrompt?: string;
  usage: { images: number; pixels: number };
}

export interface ImageModel {
  readonly provider: string;
  readonly modelId: string;
  generate(options: ImageCallOptions, context: CallContext): Promise<ImageResult>;
}

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export interface SpeechCallOptions {
  input: string;
  voice: string;
  format: SpeechFormat;
  /** Speaking rate, 0.25–4 (1 is normal). */
  speed: number;
  /** Gain factor (1 unchanged); output that would clip is limited. */
  volume: number;
  /** Semitones, -12–12. */
  pitch: number;
  /** A BCP 47 tag, or `auto` to take the language from the voice. */
  language: string;
  instructions?: string;
}

export interface SpeechModel {
  readonly provider: string;
  readonly modelId: string;
  synthesize(
    options: SpeechCallOptions,
    context: CallContext,
  ): Promise<{ audio: GeneratedMedia; usage: { characters: number; seconds: number } }>;
}

export const MUSIC_FORMATS = ['mp3', 'wav', 'flac'] as const;
export type MusicFormat = (typeof MUSIC_FORMATS)[number];

export interface MusicCallOptions {
  prompt: string;
  lyrics?: string;
  instrumental: boolean;
  durationSeconds: number;
  seed?: number;
  format: MusicFormat;
}

export interface MusicModel {
  readonly provider: string;
  readonly modelId: string;
  compose(
    options: MusicCallOptions,
    context: CallContext,
  ): Promise<{ audio: GeneratedMedia; durationSeconds: number; usage: { seconds: number } }>;
}

export interface VideoCallOptions {
  prompt: string;
  seconds: number;
  width: number;
  height: number;
  /** An image to start from (`input_reference`), already read and checked to be png, jpeg or webp. */
  inputImage?: GeneratedMedia;
}

/**
 * What a video generation gets besides the call context: a way to report progress (0–100, shown to pollers) and
 * a checkpoint kept in the task's row. An upstream model stores its own job id there, so a generation taken over
 * after a crash resumes polling that job instead of paying for a second one.
 */
export interface VideoTaskContext extends CallContext {
  progress(percent: number): void;
  checkpoint: {
    get(): string | undefined;
    set(value: string): void;
  };
}

export interface VideoResult {
  /** An MP4 (H.264), `moov` before `mdat`. */
  video: GeneratedMedia;
  /** A PNG of the first frame, when the model made one. */
  thumbnail?: GeneratedMedia;
  usage: { seconds: number };
}

/**
 * Video is asynchronous for the caller, but a model's job is one call: the task queue runs `generate` from a
 * claimed task and keeps the caller polling the task. A failure the model marks retryable (an upstream 5xx, a
 * timeout) is retried with backoff; others fail the task.
 */
export interface VideoModel {
  readonly provider: string;
  readonly modelId: string;
  /** Refuses, with a 400 naming the parameter, what this model cannot render — before the task is queued. */
  check?(options: VideoCallOptions): void;
  generate(options: VideoCallOptions, context: VideoTaskContext): Promise<VideoResult>;
}

export interface SearchCallOptions {
  query: string;
  maxResults: number;
  /** The caller's key: a model over stored files (`local:search`) finds only this key's files. */
  keyId: string;
  includeDomains?: string[];
  excludeDomains?: string[];
  /** Only results published within this many days. */
  recencyDays?: number;
}

export interface SearchResult {
  title: string;
  /** Absolute, or a path of this server (`/v1/files/{id}/content`) that the route makes absolute. */
  url: string;
  snippet: string;
  /** ISO 8601 date-time, when the provider knows it. */
  publishedAt?: string;
  source: string;
  /** The provider's relevance score, higher is better. */
  score?: number;
  /**
   * The whole passage behind the snippet, when the model holds it (the local index): an answer is written
   * from it rather than from a snippet cut mid-sentence.
   */
  passage?: string;
}

export interface SearchModel {
  readonly provider: string;
  readonly modelId: string;
  /** `filesIndexing`: a model over stored files counts the caller's files not searchable yet (still being indexed). */
  search(
    options: SearchCallOptions,
    context: CallContext,
  ): Promise<{ results: SearchResult[]; filesIndexing?: number }>;
}

/** One input to embed: a text, or token ids (of the model's own tokenizer, as OpenAI's API takes them). */
export type EmbeddingInput = string | number[];

export interface EmbeddingCallOptions {
  /** At least one, none empty (the codec checks). */
  inputs: EmbeddingInput[];
  /** The caller sent one input rather than an array of them: an upstream gets the same shape. */
  single: boolean;
  /** The vectors' length, for models that take it. */
  dimensions?: number;
  /** How the caller wants the vectors; an upstream is asked for the same, and its answer decoded exactly. */
  encodingFormat: 'float' | 'base64';
  user?: string;
  /** Fields of the request this API does not define (a provider's `input_type`, …), passed on to upstreams. */
  extra: Record<string, unknown>;
}

export interface EmbeddingResult {
  /** One vector per input, in input order; float32 values (base64 answers encode them without loss). */
  embeddings: number[][];
  usage: { inputTokens: number };
}

export interface EmbeddingModel {
  readonly provider: string;
  readonly modelId: string;
  embed(options: EmbeddingCallOptions, context: CallContext): Promise<EmbeddingResult>;
}

export interface RerankCallOptions {
  query: string;
  documents: string[];
  /** How many of the best to keep; all when undefined. */
  topN?: number;
  /** Fields of the request this API does not define, passed on to upstreams. */
  extra: Record<string, unknown>;
}

export interface RerankResult {
  /** The kept documents by their index in the request, most relevant first. */
  results: Array<{ index: number; score: number }>;
  usage: { inputTokens: number };
}

export interface RerankModel {
  readonly provider: string;
  readonly modelId: string;
  rerank(options: RerankCallOptions, context: CallContext): Promise<RerankResult>;
}

/** Containers of audio a transcription takes, as recognised from the bytes (`mp4` covers M4A). */
export const AUDIO_CONTAINERS = ['wav', 'mp3', 'ogg', 'flac', 'webm', 'mp4', 'aac'] as const;
export type AudioContainer = (typeof AUDIO_CONTAINERS)[number];

export interface TranscriptionCallOptions {
  /** The audio, already checked to decode and to be within the limits, in a container the model accepts. */
  audio: { data: Uint8Array; container: AudioContainer; filename: string };
  language?: string;
  prompt?: string;
  temperature?: number;
  /**
   * `verbose`: the model is asked for segments (and `granularities`) with their times, not only the text;
   * `diarized`: for segments labelled by speaker (OpenAI's `diarized_json`, gpt-4o-transcribe-diarize).
   */
  detail: 'text' | 'verbose' | 'diarized';
  granularities: Array<'word' | 'segment'>;
  /** Extra information asked for (`logprobs`). */
  include: string[];
  /** Form fields passed to the upstream as sent (`chunking_strategy`, `known_speaker_names[]`, …). */
  passedFields: Array<{ name: string; value: string }>;
}

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
}

export interface TranscriptSegment {
  id: number;
  start: number;
  end: number;
  text: string;
  seek?: number;
  tokens?: number[];
  temperature?: number;
  avgLogprob?: number;
  compressionRatio?: number;
  noSpeechProb?: number;
}

/** A stretch of speech by one speaker, as a diarizing model labels it (`A`, `B`, or a known speaker's name). */
export interface TranscriptSpeakerSegment {
  id: string;
  speaker: string;
  start: number;
  end: number;
  text: string;
}

export interface TranscriptLogprob {
  token: string;
  logprob: number;
  bytes?: number[];
}

/** An upstream's own token counts for a transcription (models billed by tokens). */
export interface TranscriptTokens {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  inputTextTokens?: number;
  inputAudioTokens?: number;
}

export interface Transcript {
  text: string;
  /** The language the model heard, as it names it (`english`). */
  language?: string;
  durationSeconds?: number;
  words?: TranscriptWord[];
  segments?: TranscriptSegment[];
  /** Segments labelled by speaker (a diarizing model asked for `diarized_json`). */
  speakerSegments?: TranscriptSpeakerSegment[];
  logprobs?: TranscriptLogprob[];
  tokens?: TranscriptTokens;
}

/**
 * One part of a streamed transcription. A diarizing model (`diarized_json`) names the speaker segment each delta
 * belongs to (`segmentId`) and sends each `segment` once it is complete, as OpenAI streams them.
 */
export type TranscriptionStreamPart =
  | { type: 'text-delta'; delta: string; logprobs?: TranscriptLogprob[]; segmentId?: string }
  | { type: 'segment'; segment: TranscriptSpeakerSegment }
  | { type: 'finish'; transcript: Transcript };

/**
 * Speech to text. There is no built-in model (no honest one runs offline without downloading weights); every
 * model of this type is an upstream's. The caller's audio is sniffed, probed and converted before a model
 * sees it, into one of `acceptedFormats` (any container when absent).
 */
export interface TranscriptionModel {
  readonly provider: string;
  readonly modelId: string;
  readonly acceptedFormats?: readonly AudioContainer[];
  /** What was said, in its own language. */
  transcribe(options: TranscriptionCallOptions, context: CallContext): Promise<Transcript>;
  /** What was said, in English. */
  translate(options: TranscriptionCallOptions, context: CallContext): Promise<Transcript>;
  /** A transcription as it is written; a model that does not stream yields the whole text as one delta. */
  streamTranscription(options: TranscriptionCallOptions, context: CallContext): AsyncIterable<TranscriptionStreamPart>;
}

/** The interface a model of each type offers. `vision` models are chat models that read images. */
export interface ModelByType {
  chat: ChatModel;
  vision: ChatModel;
  image: ImageModel;
  speech: SpeechModel;
  music: MusicModel;
  video: VideoModel;
  search: SearchModel;
  embedding: EmbeddingModel;
  rerank: RerankModel;
  transcription: TranscriptionModel;
}

/** What a provider offers the registry: a factory per capability it has, by the upstream's model name. */
export type ModelFactories = { [T in ModelType]?: (upstreamModel: string) => ModelByType[T] };

export interface Provider {
  readonly id: string;
  readonly models: ModelFactories;
  close?(): Promise<void>;
}
