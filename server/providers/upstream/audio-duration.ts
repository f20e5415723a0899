/**
 * How long an upstream's audio is, read cheaply from the bytes (headers and frame headers, no decoding), for
 * usage in seconds: WAV from its header, FLAC from STREAMINFO, Ogg Opus from the last page's granule position,
 * MP3 and ADTS AAC by walking their frame headers (exact for VBR too). When the bytes cannot be read, the
 * seconds are estimated from the size at a typical bitrate (`estimateAudioSeconds`) — usage is then approximate.
 */

/** Containers told apart by their first bytes; `pcm` has no header and is never sniffed. */
export type SniffedAudio = 'wav' | 'flac' | 'mp3' | 'ogg' | 'aac';

/** OpenAI's `pcm`: raw signed 16-bit little-endian mono at 24 kHz, no header. */
export const OPENAI_PCM = { sampleRate: 24_000, bytesPerSample: 2 } as const;

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Where audio frames start: after an ID3v2 tag (synchsafe size) when there is one. */
function skipId3(bytes: Uint8Array): number {
  if (bytes.length >= 10 && ascii(bytes, 0, 3) === 'ID3') {
    const size =
      ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
    return 10 + size + (bytes[5]! & 0x10 ? 10 : 0);
  }
  return 0;
}

export function sniffAudioFormat(bytes: Uint8Array): SniffedAudio | undefined {
  if (bytes.length < 12) {
    return undefined;
  }
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WAVE') {
    return 'wav';
  }
  if (ascii(bytes, 0, 4) === 'fLaC') {
    return 'flac';
  }
  if (ascii(bytes, 0, 4) === 'OggS') {
    return 'ogg';
  }
  const start = skipId3(bytes);
  if (start > 0) {
    return 'mp3';
  }
  if (bytes[0] === 0xff && (bytes[1]! & 0xf0) === 0xf0 && (bytes[1]! & 0x06) === 0) {
    return 'aac'; // ADTS: sync 0xFFF, layer bits 00
  }
  if (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0 && (bytes[1]! & 0x06) !== 0) {
    return 'mp3';
  }
  return undefined;
}

function wavSeconds(bytes: Uint8Array): number | undefined {
  const data = view(bytes);
  let byteRate = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = ascii(bytes, at, 4);
    const size = data.getUint32(at + 4, true);
    if (id === 'fmt ' && at + 16 <= bytes.length) {
      byteRate = data.getUint32(at + 16, true);
    } else if (id === 'data') {
      // A WAV written to a pipe cannot seek back: its sizes stay 0 or 0xFFFFFFFF; the rest of the file is data.
      const available = bytes.length - at - 8;
      const dataBytes = size === 0 || size > available ? available : size;
      return byteRate > 0 ? dataBytes / byteRate : undefined;
    }
    at += 8 + size + (size % 2);
  }
  return undefined;
}

/**
 * STREAMINFO is always the first metadata block: 20 bits of sample rate, then 36 bits of total samples. A FLAC
 * written to a pipe leaves the total at 0 (unknown): then the length is estimated by the caller.
 */
function flacSeconds(bytes: Uint8Array): number | undefined {
  if (bytes.length < 26 || (bytes[4]! & 0x7f) !== 0) {
    return undefined;
  }
  const sampleRate = (bytes[18]! << 12) | (bytes[19]! << 4) | (bytes[20]! >> 4);
  const totalSamples = (bytes[21]! & 0x0f) * 2 ** 32 + view(bytes).getUint32(22);
  return sampleRate > 0 && totalSamples > 0 ? totalSamples / sampleRate : undefined;
}

function oggOpusSeconds(bytes: Uint8Array): number | undefined {
  // The first page holds OpusHead (pre-skip at 10); the last page's granule position counts 48 kHz samples.
  const head = ascii(bytes, 28, 8) === 'OpusHead' ? 28 : -1;
  if (head < 0 || bytes.length < head + 12) {
    return undefined;
  }
  const preSkip = view(bytes).getUint16(head + 10, true);
  for (let at = bytes.length - 27; at >= 0; at -= 1) {
    if (bytes[at] === 0x4f && ascii(bytes, at, 4) === 'OggS') {
      const granule = Number(view(bytes).getBigInt64(at + 6, true));
      return granule > preSkip ? (granule - preSkip) / 48_000 : undefined;
    }
  }
  return undefined;
}

const MP3_BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MP3_BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MP3_SAMPLE_RATES = [44_100, 48_000, 32_000];

/** Layer III frames only (what every TTS and music server writes). */
function mp3Seconds(bytes: Uint8Array): number | undefined {
  let at = skipId3(bytes);
  let seconds = 0;
  let frames = 0;
  while (at + 4 <= bytes.length) {
    const b1 = bytes[at + 1]!;
    const b2 = bytes[at + 2]!;
    if (bytes[at] !== 0xff || (b1 & 0xe0) !== 0xe0 || (b1 & 0x06) !== 0x02) {
      break;
    }
    const version = (b1 >> 3) & 0x03; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
    const bitrateIndex = b2 >> 4;
    const rateIndex = (b2 >> 2) & 0x03;
    if (version === 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) {
      break;
    }
    const sampleRate = MP3_SAMPLE_RATES[rateIndex]! / (version === 3 ? 1 : version === 2 ? 2 : 4);
    const bitrate = (version === 3 ? MP3_BITRATES_V1 : MP3_BITRATES_V2)[bitrateIndex]! * 1000;
    const samples = version === 3 ? 1152 : 576;
    const padding = (b2 >> 1) & 0x01;
    // LAME's first frame is a Xing/Info tag, silent metadata rather than audio.
    const tag = frames === 0 ? ascii(bytes, at + 4, 40) : '';
    if (!tag.includes('Xing') && !tag.includes('Info')) {
      seconds += samples / sampleRate;
    }
    frames += 1;
    at += Math.floor(((samples / 8) * bitrate) / sampleRate) + padding;
  }
  return frames > 0 ? seconds : undefined;
}

const AAC_SAMPLE_RATES = [
  96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350,
];

function adtsSeconds(bytes: Uint8Array): number | undefined {
  let at = 0;
  let seconds = 0;
  while (at + 7 <= bytes.length && bytes[at] === 0xff && (bytes[at + 1]! & 0xf6) === 0xf0) {
    const sampleRate = AAC_SAMPLE_RATES[(bytes[at + 2]! >> 2) & 0x0f];
    const length = ((bytes[at + 3]! & 0x03) << 11) | (bytes[at + 4]! << 3) | (bytes[at + 5]! >> 5);
    if (!sampleRate || length < 7) {
      break;
    }
    seconds += (1024 * ((bytes[at + 6]! & 0x03) + 1)) / sampleRate;
    at += length;
  }
  return seconds > 0 ? seconds : undefined;
}

/** The seconds of audio read from the bytes, or `undefined` when they cannot be read as `format`. */
export function audioSeconds(bytes: Uint8Array, format: SniffedAudio | 'pcm'): number | undefined {
  switch (format) {
    case 'pcm':
      return bytes.length / (OPENAI_PCM.sampleRate * OPENAI_PCM.bytesPerSample);
    case 'wav':
      return wavSeconds(bytes);
    case 'flac':
      return flacSeconds(bytes);
    case 'ogg':
      return oggOpusSeconds(bytes);
    case 'mp3':
      return mp3Seconds(bytes);
    case 'aac':
      return adtsSeconds(bytes);
  }
}

/** Typical bitrates (bits per second) of what TTS servers send, for the estimate when nothing could be read. */
const TYPICAL_BITRATES: Record<SniffedAudio | 'pcm', number> = {
  mp3: 128_000,
  aac: 128_000,
  ogg: 48_000,
  flac: 400_000,
  wav: OPENAI_PCM.sampleRate * OPENAI_PCM.bytesPerSample * 8,
  pcm: OPENAI_PCM.sampleRate * OPENAI_PCM.bytesPerSample * 8,
};

/** An estimate from the size alone: only for bytes `audioSeconds` could not read. */
export function estimateAudioSeconds(byteLength: number, format: SniffedAudio | 'pcm'): number {
  return (byteLength * 8) / TYPICAL_BITRATES[format];
}
