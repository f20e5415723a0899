/**
 * A small MP4 box walker for tests, instead of ffprobe: the `ftyp` brand, the order of the top-level boxes (so
 * `moov` before `mdat` can be asserted), `mvhd` duration in seconds, and per track the `tkhd` size, the `stsd`
 * sample entry (`avc1`, `mp4a`) and, for H.264, the `avcC` profile byte (66 Baseline, 77 Main, 100 High).
 */

export interface Mp4Track {
  width: number;
  height: number;
  sampleEntry: string;
  /** AVCProfileIndication from `avcC`, for `avc1` tracks. */
  avcProfile?: number;
}

export interface Mp4Info {
  brand: string;
  topLevel: string[];
  timescale: number;
  seconds: number;
  /** mvhd's creation time (seconds since 1904): a wall clock in here makes equal frames give unequal files. */
  created: number;
  tracks: Mp4Track[];
}

interface Box {
  type: string;
  body: Buffer;
}

function childBoxes(data: Buffer): Box[] {
  const boxes: Box[] = [];
  for (let offset = 0; offset + 8 <= data.length; ) {
    let size = data.readUInt32BE(offset);
    let header = 8;
    if (size === 1) {
      size = Number(data.readBigUInt64BE(offset + 8));
      header = 16;
    } else if (size === 0) {
      size = data.length - offset;
    }
    if (size < header || offset + size > data.length) {
      throw new Error(`malformed box at ${offset}`);
    }
    boxes.push({
      type: data.toString('latin1', offset + 4, offset + 8),
      body: data.subarray(offset + header, offset + size),
    });
    offset += size;
  }
  return boxes;
}

function find(boxes: Box[], type: string): Box {
  const box = boxes.find((candidate) => candidate.type === type);
  if (!box) {
    throw new Error(`no ${type} box among ${boxes.map((candidate) => candidate.type).join(', ')}`);
  }
  return box;
}

function readTrack(trak: Box): Mp4Track {
  const children = childBoxes(trak.body);
  const tkhd = find(children, 'tkhd').body;
  // Full box: version (1 byte) + flags (3); width and height are 16.16 fixed point at the end.
  const sizeAt = tkhd[0] === 1 ? 88 : 76;
  const stbl = childBoxes(find(childBoxes(find(childBoxes(find(children, 'mdia').body), 'minf').body), 'stbl').body);
  const stsd = find(stbl, 'stsd').body;
  // version/flags (4) + entry count (4), then the first sample entry box.
  const entry = childBoxes(stsd.subarray(8))[0];
  const track: Mp4Track = {
    width: tkhd.readUInt32BE(sizeAt) / 65_536,
    height: tkhd.readUInt32BE(sizeAt + 4) / 65_536,
    sampleEntry: entry.type,
  };
  if (entry.type === 'avc1') {
    // A visual sample entry has 78 bytes of fields before its child boxes.
    const avcC = find(childBoxes(entry.body.subarray(78)), 'avcC').body;
    track.avcProfile = avcC[1];
  }
  return track;
}

export function readMp4(bytes: Uint8Array): Mp4Info {
  const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const top = childBoxes(file);
  const moov = childBoxes(find(top, 'moov').body);
  const mvhd = find(moov, 'mvhd').body;
  const version1 = mvhd[0] === 1;
  const timescale = mvhd.readUInt32BE(version1 ? 20 : 12);
  const duration = version1 ? Number(mvhd.readBigUInt64BE(24)) : mvhd.readUInt32BE(16);
  return {
    brand: find(top, 'ftyp').body.toString('latin1', 0, 4),
    topLevel: top.map((box) => box.type),
    timescale,
    seconds: duration / timescale,
    created: version1 ? Number(mvhd.readBigUInt64BE(4)) : mvhd.readUInt32BE(4),
    tracks: moov.filter((box) => box.type === 'trak').map(readTrack),
  };
}

/** What a caller of the API cares about: does it stream (moov first), how long, and its video track. */
export function mp4Summary(bytes: Uint8Array): {
  moovBeforeMdat: boolean;
  seconds: number;
  video?: { codec: string; width: number; height: number; profile?: number };
} {
  const info = readMp4(bytes);
  const moov = info.topLevel.indexOf('moov');
  const mdat = info.topLevel.indexOf('mdat');
  const track = info.tracks.find((candidate) => candidate.sampleEntry === 'avc1');
  return {
    moovBeforeMdat: moov >= 0 && mdat >= 0 && moov < mdat,
    seconds: info.seconds,
    video: track && { codec: track.sampleEntry, width: track.width, height: track.height, profile: track.avcProfile },
  };
}
