/** Decoded audio as the engines hand it over: interleaved signed 16-bit samples. */
export interface Pcm {
  samples: Int16Array;
  sampleRate: number;
  channels: 1 | 2;
}

export function durationOf(pcm: Pcm): number {
  return pcm.samples.length / pcm.channels / pcm.sampleRate;
}
