/**
 * Integrated loudness of mono 16-bit speech as ITU-R BS.1770-4 / EBU R128 define it (the measure ffmpeg's
 * `ebur128` filter reports), so every built-in voice can be brought to one loudness: Flite's and eSpeak's voices
 * differ by about 16 dB as they come out of the engines.
 *
 * K-weighting is the standard's two biquads (a high shelf, then a high pass), their coefficients derived for the
 * actual sample rate from the analogue prototype as libebur128 does (the standard tabulates them for 48 kHz
 * only; Flite speaks at 16 kHz, eSpeak at 22.05 kHz). Blocks of 400 ms every 100 ms, gated at −70 LUFS and then
 * 10 LU below the mean of the blocks that passed.
 */

/** The loudness every built-in voice is brought to: −16 LUFS integrated, the common level for spoken content. */
export const SPEECH_LOUDNESS_LUFS = -16;
/** No voice is raised by more than this, so near-silence (a lone breath) is not blown up to full scale. */
const MAX_GAIN_DB = 30;

interface Biquad {
  b: [number, number, number];
  a: [number, number];
}

function kWeighting(sampleRate: number): Biquad[] {
  // Stage 1: the high shelf modelling the head.
  let f0 = 1681.974450955533;
  const gainDb = 3.999843853973347;
  let q = 0.7071752369554196;
  let k = Math.tan((Math.PI * f0) / sampleRate);
  const vh = 10 ** (gainDb / 20);
  const vb = vh ** 0.4996667741545416;
  let a0 = 1 + k / q + k * k;
  const shelf: Biquad = {
    b: [(vh + (vb * k) / q + k * k) / a0, (2 * (k * k - vh)) / a0, (vh - (vb * k) / q + k * k) / a0],
    a: [(2 * (k * k - 1)) / a0, (1 - k / q + k * k) / a0],
  };
  // Stage 2: the RLB high pass.
  f0 = 38.13547087602444;
  q = 0.5003270373238773;
  k = Math.tan((Math.PI * f0) / sampleRate);
  a0 = 1 + k / q + k * k;
  const highPass: Biquad = { b: [1, -2, 1], a: [(2 * (k * k - 1)) / a0, (1 - k / q + k * k) / a0] };
  return [shelf, highPass];
}

/** The K-weighted signal, squared, as one value per sample (full scale = 1). */
function weightedSquares(samples: Int16Array, sampleRate: number): Float64Array {
  const out = new Float64Array(samples.length);
  for (let i = 0; i < samples.length; i += 1) {
    out[i] = samples[i]! / 32768; // the loops here stay within the arrays' lengths
  }
  for (const { b, a } of kWeighting(sampleRate)) {
    let x1 = 0;
    let x2 = 0;
    let y1 = 0;
    let y2 = 0;
    for (let i = 0; i < out.length; i += 1) {
      const x = out[i]!;
      const y = b[0] * x + b[1] * x1 + b[2] * x2 - a[0] * y1 - a[1] * y2;
      x2 = x1;
      x1 = x;
      y2 = y1;
      y1 = y;
      out[i] = y;
    }
  }
  for (let i = 0; i < out.length; i += 1) {
    out[i]! *= out[i]!;
  }
  return out;
}

const toLufs = (meanSquare: number) => -0.691 + 10 * Math.log10(meanSquare);

/** Integrated loudness in LUFS; -Infinity for silence or audio shorter than one 400 ms block. */
export function integratedLoudness(samples: Int16Array, sampleRate: number): number {
  const squares = weightedSquares(samples, sampleRate);
  const block = Math.round(0.4 * sampleRate);
  const step = Math.round(0.1 * sampleRate);
  // Prefix sums make every block's mean one subtraction.
  const prefix = new Float64Array(squares.length + 1);
  for (let i = 0; i < squares.length; i += 1) {
    prefix[i + 1] = prefix[i]! + squares[i]!; // prefix has one more entry than squares
  }
  const blocks: number[] = [];
  for (let start = 0; start + block <= squares.length; start += step) {
    const meanSquare = (prefix[start + block]! - prefix[start]!) / block; // start + block ≤ squares.length
    if (toLufs(meanSquare) > -70) {
      blocks.push(meanSquare);
    }
  }
  if (blocks.length === 0) {
    return -Infinity;
  }
  const relativeGate = toLufs(blocks.reduce((sum, value) => sum + value, 0) / blocks.length) - 10;
  const gated = blocks.filter((meanSquare) => toLufs(meanSquare) > relativeGate);
  return toLufs(gated.reduce((sum, value) => sum + value, 0) / gated.length);
}

/** The gain factor that brings `samples` to `target` LUFS; 1 when there is nothing to measure. */
export function loudnessGain(samples: Int16Array, sampleRate: number, target = SPEECH_LOUDNESS_LUFS): number {
  const measured = integratedLoudness(samples, sampleRate);
  if (!Number.isFinite(measured)) {
    return 1;
  }
  return 10 ** (Math.min(MAX_GAIN_DB, target - measured) / 20);
}
