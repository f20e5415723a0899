/**
 * Every job the media workers run, by name. Each entry loads its engine on first use, so a worker that only
 * ever renders images never loads the speech synthesiser or the 15 MB soundfont; the engine module keeps what it
 * loaded (compiled WebAssembly, the sound bank) for the worker's next job.
 */
import type { Pcm } from './audio/pcm.js';
import type { FliteInput } from './speech/flite.js';

export const mediaJobs = {
  async speech(input: FliteInput): Promise<Pcm> {
    const { synthesizeWithFlite } = await import('./speech/flite.js');
    return synthesizeWithFlite(input);
  },
  async mp3(input: { pcm: Pcm; kbps: number }): Promise<{ mp3: Uint8Array }> {
    const { encodeMp3WithLame } = await import('./audio/mp3-lame.js');
    return { mp3: encodeMp3WithLame(input.pcm, input.kbps) };
  },
};

export type MediaJobs = typeof mediaJobs;
