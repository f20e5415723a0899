/**
 * The messages between the server and its eSpeak child process. A request is one JSON line on the child's
 * stdin. A reply is one JSON line on its stdout, followed (when `ok`) by exactly `byteLength` bytes of
 * little-endian 16-bit mono PCM.
 */
export interface EspeakRequest {
  id: number;
  text: string;
  /** eSpeak's voice string: a language, optionally `+variant`. */
  voice: string;
  /** Words per minute, 80–450. */
  rate: number;
  /** 0–99, 50 normal. */
  pitch: number;
  /** The caller's volume: a gain applied after the one that brings the voice to the common loudness (limited, never clipped). */
  gain: number;
}

export type EspeakReply =
  | { id: number; ok: true; sampleRate: number; byteLength: number }
  | { id: number; ok: false; message: string; badVoice: boolean };
