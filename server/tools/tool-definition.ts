/**
 * What a tool is: a name, an input and an output schema (zod 4, which the MCP SDK reads as Standard Schema and
 * turns into the JSON Schemas of `tools/list`), and one `run` function. The REST operation and the MCP
 * `tools/call` of a tool run that same function with the call scope of the HTTP request they arrived on, so model resolution,
 * the key's model limits and the usage record are the REST route's own (calls/prepare-call.ts).
 *
 * A tool knows nothing of MCP framing: it returns its structured output, the text a language model reads, and
 * the media it made (bytes and their signed link); routes/mcp-server.ts turns that into MCP content.
 */
import type { z } from 'zod';
import type { MediaDeps } from '../calls/link-media.js';
import type { CallDeps } from '../calls/prepare-call.js';
import type { FileIndex } from '../core/file-index.js';
import type { CallScope } from '../http/call-scope.js';
import type { TranscriptionSettings } from '../config.js';
import type { MediaPool } from '../engines/media-pool.js';
import type { FileStore } from '../storage/file-store.js';
import type { VideoQueue } from '../calls/video/video-tasks.js';
import type { ResolvedAddress } from '../providers/upstream/safe-fetch.js';

/** Settings of the tools surface, from configuration. */
export interface ToolSettings {
  /** Origins besides localhost, 127.0.0.1 and [::1] allowed to call `/v1/mcp` (`OMNIGATE_MCP_ALLOWED_ORIGINS`). */
  mcpAllowedOrigins?: string[];
  /** Replaces DNS for image URLs; only tests set it, to point a public-looking name at a private address. */
  resolveHost?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Replaces the guard's blocked-address rule for image URLs; only tests set it, to reach a loopback server. */
  blockedReason?: (address: string) => string | undefined;
}

/** What every tool may use; the app's dependencies satisfy it. */
export interface ToolDeps extends CallDeps {
  /** The built-in engines' worker pool, for work with no model behind it (image_understanding's analysis). */
  mediaPool: MediaPool;
  media: MediaDeps;
  videos: VideoQueue;
  files: { store: FileStore };
  /** The search index (read_file extracts text through it) and the default search and answer models. */
  search?: { index: FileIndex; defaultSearchModel?: string; defaultAnswerModel?: string };
  tools?: ToolSettings;
  /** Speech-to-text limits (transcribe_audio); OpenAI's when absent. */
  transcription?: TranscriptionSettings;
  now?: () => number;
}

/** One invocation: the call scope of the HTTP request it arrived on (its key, usage record, abort signal, base URL). */
export interface ToolInvocation {
  deps: ToolDeps;
  scope: CallScope;
  /** Reports progress (0–total) where the protocol revision and the client allow it; otherwise does nothing. */
  progress(progress: number, total: number, message?: string): Promise<void>;
}

/** Media a tool made, kept in the blob store behind a signed link. */
export interface ToolMedia {
  kind: 'image' | 'audio' | 'video';
  mediaType: string;
  /** The bytes, when small enough to hand over inline; large media is given by link only. */
  data?: Uint8Array;
  url: string;
  name: string;
}

export interface ToolOutcome<O> {
  output: O;
  /** What a language model is given to read. */
  text: string;
  media?: ToolMedia[];
}

export interface Tool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: { readOnlyHint?: boolean; openWorldHint?: boolean; idempotentHint?: boolean; destructiveHint?: boolean };
  run(input: z.output<I>, invocation: ToolInvocation): Promise<ToolOutcome<z.input<O>>>;
}

/** Keeps the schemas' types on `run` (a plain object literal would widen them). */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: Tool<I, O>): Tool<I, O> {
  return tool;
}
