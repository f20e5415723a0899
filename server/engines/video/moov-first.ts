/**
 * Moves an MP4's `moov` box in front of its media data (what ffmpeg's `+faststart` does), so a browser can
 * start playing before the whole file has arrived. The WebAssembly encoder writes `moov` last; moving it
 * forward shifts every sample by its size, so each track's chunk offsets (`stco`, `co64`) grow by as much.
 * It also stamps the wall clock into the movie, track and media headers; those times are zeroed (as ffmpeg's
 * bit-exact mode does), so the same frames always give the same file.
 */

interface Box {
  type: string;
  start: number;
  size: number;
}

function topLevelBoxes(file: Uint8Array): Box[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const boxes: Box[] = [];
  for (let offset = 0; offset + 8 <= file.length; ) {
    let size = view.getUint32(offset);
    if (size === 1) {
      size = Number(view.getBigUint64(offset + 8));
    } else if (size === 0) {
      size = file.length - offset;
    }
    if (size < 8 || offset + size > file.length) {
      throw new Error(`malformed MP4 box at ${offset}`);
    }
    boxes.push({ type: String.fromCharCode(...file.subarray(offset + 4, offset + 8)), start: offset, size });
    offset += size;
  }
  return boxes;
}

/** Boxes whose children hold the chunk offset tables. */
const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl']);

/** Headers whose creation and modification times follow their version and flags. */
const TIMED_HEADERS = new Set(['mvhd', 'tkhd', 'mdhd']);

function rewriteMoov(moov: Uint8Array, shift: number): void {
  const view = new DataView(moov.buffer, moov.byteOffset, moov.byteLength);
  const visit = (start: number, end: number) => {
    for (let offset = start; offset + 8 <= end; ) {
      const size = view.getUint32(offset);
      if (size < 8) {
        return;
      }
      const type = String.fromCharCode(...moov.subarray(offset + 4, offset + 8));
      if (CONTAINERS.has(type)) {
        visit(offset + 8, offset + size);
      } else if (TIMED_HEADERS.has(type)) {
        // Version 0: two 32-bit times; version 1: two 64-bit ones.
        moov.fill(0, offset + 12, offset + 12 + (moov[offset + 8] === 1 ? 16 : 8));
      } else if (type === 'stco' || type === 'co64') {
        const count = view.getUint32(offset + 12);
        for (let entry = 0; entry < count; entry++) {
          if (type === 'stco') {
            const at = offset + 16 + entry * 4;
            view.setUint32(at, view.getUint32(at) + shift);
          } else {
            const at = offset + 16 + entry * 8;
            view.setBigUint64(at, view.getBigUint64(at) + BigInt(shift));
          }
        }
      }
      offset += size;
    }
  };
  visit(8, moov.length);
}

export function moveMoovFirst(file: Uint8Array): Uint8Array {
  const boxes = topLevelBoxes(file);
  const moovIndex = boxes.findIndex((box) => box.type === 'moov');
  const mdatIndex = boxes.findIndex((box) => box.type === 'mdat');
  if (moovIndex < 0 || mdatIndex < 0) {
    throw new Error('an MP4 without moov or mdat');
  }
  const moovBox = boxes[moovIndex]!; // found above
  const moov = file.slice(moovBox.start, moovBox.start + moovBox.size);
  const moving = moovIndex > mdatIndex;
  // stco offsets are 32-bit: a file near 4 GiB would overflow them, which no video of ours comes near.
  rewriteMoov(moov, moving ? moov.length : 0);
  if (!moving) {
    const output = file.slice();
    output.set(moov, moovBox.start);
    return output;
  }
  const output = new Uint8Array(file.length);
  let written = 0;
  const copy = (bytes: Uint8Array) => {
    output.set(bytes, written);
    written += bytes.length;
  };
  boxes.forEach((box, index) => {
    if (index === mdatIndex) {
      copy(moov);
    }
    if (index !== moovIndex) {
      copy(file.subarray(box.start, box.start + box.size));
    }
  });
  return output;
}
