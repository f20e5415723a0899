/**
 * Every job the media workers run, by name. Each entry loads its engine on first use, so a worker that only
 * ever renders images never loads the speech synthesiser or the 15 MB soundfont; the engine module keeps what it
 * loaded (compiled WebAssembly, the sound bank) for the worker's next job.
 */
import type { Pcm } from './audio/pcm.js';
import type { EmbeddedPassages, EmbedPassagesInput } from './embed/embed-passages.js';
import type { ImageFacts } from './image-analysis/analyse-image.js';
import type { RenderImageInput } from './image/render-image.js';
import type { MusicJobInput } from './music/render-music.js';
import type { FliteInput } from './speech/flite.js';
import type { RenderVideoInput } from './video/render-video.js';
import type { JobReporter } from './pool/job-protocol.js';
import type { ExtractedPassages } from './text/extract-passages.js';
import type { ExtractedText, ExtractTextInput } from './text/extract-text.js';
import type { IndexedPassages, IndexPassagesInput } from './text/index-passages.js';

export const mediaJobs = {
  image: async (input: RenderImageInput) => (await import('./image/render-image.js')).renderImage(input),
  /** The built-in image understanding (sharp, exifr, file-type): ~35 MiB loaded only by a worker that analyses. */
  'analyse-image': async (input: { bytes: Uint8Array }): Promise<ImageFacts> =>
    (await import('./image-analysis/analyse-image.js')).analyseImage(input.bytes),
  music: async (input: MusicJobInput) => (await import('./music/render-music.js')).renderMusic(input),
  /** Draws and encodes a whole video; reports progress per frame and names its ffmpeg child to the pool. */
  video: async (input: RenderVideoInput, reporter: JobReporter) =>
    (await import('./video/render-video.js')).renderVideo(input, reporter),
  speech: async (input: FliteInput): Promise<Pcm> => (await import('./speech/flite.js')).synthesizeWithFlite(input),
  /** The pure-JS MP3 encoder, for platforms without the ffmpeg binary. */
  mp3: async (input: { pcm: Pcm; kbps: number }): Promise<{ mp3: Uint8Array }> => ({
    mp3: (await import('./audio/mp3-lame.js')).encodeMp3WithLame(input.pcm, input.kbps),
  }),
  /** The built-in lexical embedder (`local:embed`): cheap per text, but a 2,048-input batch is not. */
  embed: async (input: { inputs: Array<string | number[]>; dimensions: number }): Promise<{ vectors: number[][] }> => ({
    vectors: (await import('./embed/lexical-embed.js')).lexicalEmbed(input),
  }),
  /**
   * The background embedding of stored passages by the built-in embedder, read by the worker on its own connection
   * to the index's SQLite file: the main thread sends ids and gets one buffer of vectors back (embed-passages.ts).
   */
  'embed-passages': async (input: EmbedPassagesInput): Promise<EmbeddedPassages> =>
    (await import('./embed/embed-passages.js')).embedPassages(input),
  /** A stored file's plain text for the search index; pdf.js parsing would otherwise hold the event loop. */
  'extract-text': async (input: ExtractTextInput): Promise<ExtractedText> =>
    (await import('./text/extract-text.js')).extractText(input),
  /**
   * The same text cut into the search index's passages, here rather than on the event loop; all but the last
   * PASSAGES_PER_MESSAGE go ahead as parts (`onPart` receives `string[]`).
   */
  'extract-passages': async (input: ExtractTextInput, reporter: JobReporter): Promise<ExtractedPassages> =>
    (await import('./text/extract-passages.js')).extractPassages(input, (passages) => reporter.part(passages)),
  /**
   * The same passages written into the search index's SQLite file by the worker on its own connection: the
   * main thread gets only the count (index-passages.ts).
   */
  'index-passages': async (input: IndexPassagesInput): Promise<IndexedPassages> =>
    (await import('./text/index-passages.js')).indexPassages(input),
};

export type MediaJobs = typeof mediaJobs;
