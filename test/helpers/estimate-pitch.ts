/**
 * The median fundamental frequency of voiced speech, by normalised autocorrelation over 40 ms frames (60–400
 * Hz; frames that are quiet or not clearly periodic are skipped). Crude, but enough to tell whether a voice
 * went up or down by some semitones.
 */
export function medianPitchHz(samples: Int16Array, sampleRate: number): number {
  const frame = Math.round(sampleRate * 0.04);
  const minLag = Math.floor(sampleRate / 400);
  const maxLag = Math.ceil(sampleRate / 60);
  const pitches: number[] = [];
  for (let start = 0; start + frame + maxLag < samples.length; start += frame >> 1) {
    let energy = 0;
    for (let i = 0; i < frame; i += 1) {
      energy += samples[start + i] ** 2;
    }
    if (energy / frame < 1e5) {
      continue;
    }
    let best = 0;
    let bestLag = 0;
    for (let lag = minLag; lag <= maxLag; lag += 1) {
      let product = 0;
      let lagged = 0;
      for (let i = 0; i < frame; i += 1) {
        product += samples[start + i] * samples[start + i + lag];
        lagged += samples[start + i + lag] ** 2;
      }
      const correlation = product / Math.sqrt(energy * lagged);
      if (correlation > best) {
        best = correlation;
        bestLag = lag;
      }
    }
    if (best > 0.6) {
      pitches.push(sampleRate / bestLag);
    }
  }
  pitches.sort((a, b) => a - b);
  return pitches[pitches.length >> 1];
}
