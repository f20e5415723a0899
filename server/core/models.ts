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
export const MODEL_TYPES = ['chat', 'image', 'video', 'speech', 'music', 'search', 'vision'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

/** What a media call produced, in its modality's own units (recorded per call, shown by `GET /v1/usage`). */
export interface MediaUsage {
  images?: number;
  pixels?: number;
  characters?: number;
  seconds?: number;
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
  synthesize(options: SpeechCallOptions, context: CallContext): Promise<{ audio: GeneratedMedia; usage: { characters: number; seconds: number } }>;
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
  compose(options: MusicCallOptions, context: CallContext): Promise<{ audio: GeneratedMedia; durationSeconds: number; usage: { seconds: number } }>;
}

export interface VideoCallOptions {
  prompt: string;
  seconds: number;
  width: number;
  height: number;
  inputImage?: GeneratedMedia;
}

/** Where a started video job stands; `progress` is 0–100. */
export type VideoJobStatus =
  | { state: 'queued' | 'processing'; progress: number }
  | { state: 'completed'; video: GeneratedMedia; usage: { seconds: number } }
  | { state: 'failed'; error: { code: string; message: string }; retryable: boolean };

/** Video is asynchronous: start a job, then ask how it stands until it completed or failed. */
export interface VideoModel {
  readonly provider: string;
  readonly modelId: string;
  start(options: VideoCallOptions, context: CallContext): Promise<{ jobId: string }>;
  status(jobId: string, context: CallContext): Promise<VideoJobStatus>;
}

export interface SearchCallOptions {
  query: string;
  maxResults: number;
  includeDomains?: string[];
  excludeDomains?: string[];
  /** Only results published within this many days. */
  recencyDays?: number;
}

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  publishedAt?: string;
  source: string;
}

export interface SearchModel {
  readonly provider: string;
  readonly modelId: string;
  search(options: SearchCallOptions, context: CallContext): Promise<{ results: SearchResult[] }>;
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
}

/** What a provider offers the registry: a factory per capability it has, by the upstream's model name. */
export type ModelFactories = { [T in ModelType]?: (upstreamModel: string) => ModelByType[T] };

export interface Provider {
  readonly id: string;
  readonly models: ModelFactories;
  close?(): Promise<void>;
}
