/**
 * Every job the media workers run, by name. Each entry loads its engine on first use, so a worker that only
 * ever renders images never loads the speech synthesiser or the 15 MB soundfont; the engine module keeps what it
 * loaded (compiled WebAssembly, the sound bank) for the worker's next job.
 */
import type { RenderImageInput } from './image/render-image.js';
import type { MusicJobInput } from './music/render-music.js';

export const mediaJobs = {
  image: async (input: RenderImageInput) => (await import('./image/render-image.js')).renderImage(input),
  music: async (input: MusicJobInput) => (await import('./music/render-music.js')).renderMusic(input),
};

export type MediaJobs = typeof mediaJobs;
