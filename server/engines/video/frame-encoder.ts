/** What the video job needs of an H.264 encoder, whichever one is used. */
export interface FrameEncoder {
  /** Which encoder this is, for the result and the logs. */
  readonly name: 'ffmpeg' | 'wasm';
  /**
   * Queues one RGBA frame. The promise settles once the bytes were handed on, after which the caller may draw
   * into the same buffer again; it rejects if the encoder has failed.
   */
  addFrame(rgba: Uint8Array): Promise<void>;
  /** Ends the stream and resolves the MP4, `moov` before `mdat`. */
  finish(): Promise<Uint8Array>;
  /** Stops at once and frees what the encoder holds (a child process, a temp file); safe to call twice. */
  abort(): void;
}

export interface FrameEncoderOptions {
  width: number;
  height: number;
  fps: number;
}
