/**
 * Every job the media workers run, by name. Each entry loads its engine on first use, so a worker that only
 * ever renders images never loads the speech synthesiser or the 15 MB soundfont; the engine module keeps what it
 * loaded (compiled WebAssembly, the sound bank) for the worker's next job.
 */
export const mediaJobs = {
  async music(input: import('./music/render-music.js').MusicJobInput) {
    return (await import('./music/render-music.js')).renderMusic(input);
  },
};

export type MediaJobs = typeof mediaJobs;
