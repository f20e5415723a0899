/**
 * `Buffer.from(text, 'base64')` without holding the event loop on a long string: decoding 24 MiB of base64 (an
 * `audio_base64`, an image data URL at the body limit) is one block of 10–40 ms. A string from
 * `BASE64_SLICED_MIN_CHARS` on is decoded `BASE64_SLICE_CHARS` at a time (a multiple of 4, so each slice's bytes
 * are those of its place in the whole), with a turn of the event loop between slices, into one buffer. That holds
 * for plain base64: a slice holding anything else — whitespace, `=` before the end, other characters, code units
 * over 0x7f (Node reads only their low byte) — is seen by its length in bytes, and then the whole string is
 * instead copied a slice at a time into bytes (each code unit's low byte, what Node's decoder reads) and decoded
 * by `Buffer.from` in a body thread (body-pool.ts), handed back without a copy: the same bytes, any input. A
 * shorter string decodes in place in well under a millisecond.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { runInBodyThread } from './body-pool.js';

export const BASE64_SLICED_MIN_CHARS = 1024 * 1024;
/** About half a millisecond of decoding per slice. */
const BASE64_SLICE_CHARS = 1024 * 1024;

export interface Base64Options {
  /** Whose job a body thread runs, if it has to (the API key): its share of the pool's queue. */
  owner?: string;
  signal?: AbortSignal;
}

export async function decodeBase64(text: string, options: Base64Options = {}): Promise<Uint8Array> {
  if (text.length < BASE64_SLICED_MIN_CHARS) {
    return new Uint8Array(Buffer.from(text, 'base64'));
  }
  const decoded = await decodePlainInSlices(text, options.signal);
  return decoded ?? decodeInThread(text, options);
}

/** The bytes of `text` if it is plain base64 (its alphabet or base64url's, `=` only at its end), else undefined. */
async function decodePlainInSlices(text: string, signal: AbortSignal | undefined): Promise<Uint8Array | undefined> {
  const bytes = Buffer.allocUnsafe(Math.ceil(text.length / 4) * 3);
  let written = 0;
  for (let start = 0; start < text.length; start += BASE64_SLICE_CHARS) {
    if (start > 0) {
      await nextTurn();
      signal?.throwIfAborted();
    }
    const slice = text.slice(start, start + BASE64_SLICE_CHARS);
    const last = start + BASE64_SLICE_CHARS >= text.length;
    // Code units over 0x7f take more than one byte in UTF-8 (a fast native count); Node's decoder would read
    // their low byte, which may be a letter.
    if (Buffer.byteLength(slice, 'utf8') !== slice.length) {
      return undefined;
    }
    const count = bytes.write(slice, written, 'base64');
    written += count;
    // A full slice of plain base64 gives 3 bytes per 4 characters; one that skipped a character or stopped at
    // `=` gives fewer. The last slice may end in padding or a short group, which decodes as in the whole.
    if (!last && count !== (slice.length / 4) * 3) {
      return undefined;
    }
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, written);
}

async function decodeInThread(text: string, options: Base64Options): Promise<Uint8Array> {
  const bytes = Buffer.from(new ArrayBuffer(text.length));
  for (let start = 0; start < text.length; start += BASE64_SLICE_CHARS) {
    if (start > 0) {
      await nextTurn();
      options.signal?.throwIfAborted();
    }
    bytes.write(text.slice(start, start + BASE64_SLICE_CHARS), start, 'latin1');
  }
  return runInBodyThread('decodeBase64', bytes, options);
}

/** Bytes per slice of `encodeBase64`: a multiple of 3, so the slices' base64 joins into that of the whole. */
const ENCODE_SLICE_BYTES = 768 * 1024;

/**
 * `Buffer.from(bytes).toString('base64')` a slice at a time with a turn of the event loop between slices, for
 * bytes of megabytes: the pieces are joined without copying (V8 keeps the joined string as a tree of them).
 */
export async function encodeBase64(bytes: Uint8Array): Promise<string> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let text = buffer.toString('base64', 0, ENCODE_SLICE_BYTES);
  for (let start = ENCODE_SLICE_BYTES; start < buffer.length; start += ENCODE_SLICE_BYTES) {
    await nextTurn();
    text += buffer.toString('base64', start, start + ENCODE_SLICE_BYTES);
  }
  return text;
}
