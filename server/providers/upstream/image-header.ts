/**
 * The format and pixel size of an image, read from its first bytes. Upstream answers are trusted for neither:
 * a server asked for webp may send png, and a URL's `content-type` is whatever its host says. Only the four
 * formats OpenAI-compatible servers answer with are known (png, jpeg, webp, gif).
 */

export interface ImageHeader {
  mediaType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
  width: number;
  height: number;
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function jpegSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | undefined {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) {
      return undefined;
    }
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    // SOF0–SOF15 carry the size; C4 (Huffman tables), C8 (reserved) and CC (arithmetic coding) do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
    }
    at += 2 + view.getUint16(at + 2);
  }
  return undefined;
}

function webpSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | undefined {
  const chunk = ascii(bytes, 12, 4);
  if (chunk === 'VP8 ' && bytes.length >= 30) {
    return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  }
  if (chunk === 'VP8L' && bytes.length >= 25) {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X' && bytes.length >= 30) {
    const width = bytes[24]! | (bytes[25]! << 8) | (bytes[26]! << 16);
    const height = bytes[27]! | (bytes[28]! << 8) | (bytes[29]! << 16);
    return { width: width + 1, height: height + 1 };
  }
  return undefined;
}

/** `undefined` when the bytes are none of the known formats or too short to say. */
export function readImageHeader(bytes: Uint8Array): ImageHeader | undefined {
  if (bytes.length < 12) {
    return undefined;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (
    bytes.length >= 24 &&
    view.getUint32(0) === 0x89504e47 &&
    view.getUint32(4) === 0x0d0a1a0a &&
    ascii(bytes, 12, 4) === 'IHDR'
  ) {
    return { mediaType: 'image/png', width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    const size = jpegSize(bytes, view);
    return size && { mediaType: 'image/jpeg', ...size };
  }
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') {
    const size = webpSize(bytes, view);
    return size && { mediaType: 'image/webp', ...size };
  }
  const gif = ascii(bytes, 0, 6);
  if (gif === 'GIF87a' || gif === 'GIF89a') {
    return { mediaType: 'image/gif', width: view.getUint16(6, true), height: view.getUint16(8, true) };
  }
  return undefined;
}
