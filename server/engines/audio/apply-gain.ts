/**
 * Volume as a gain on 16-bit samples, with a soft limiter instead of clipping: above 80 % of full scale the
 * level is bent smoothly (tanh) towards full scale, so loud speech gets louder without the harsh square-wave
 * clipping, and never wraps around as a plain Int16 store of an out-of-range value would.
 */
const KNEE = 0.8 * 32767;
const HEADROOM = 32767 - KNEE;

export function applyGain(samples: Int16Array, gain: number): Int16Array {
  if (gain === 1) {
    return samples;
  }
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i += 1) {
    const value = samples[i]! * gain;
    const magnitude = Math.abs(value);
    if (magnitude <= KNEE) {
      out[i] = Math.round(value);
    } else {
      const limited = KNEE + HEADROOM * Math.tanh((magnitude - KNEE) / HEADROOM);
      out[i] = Math.round(Math.sign(value) * Math.min(32767, limited));
    }
  }
  return out;
}
