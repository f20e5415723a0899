/**
 * The `video` job of the media workers: draws the prompt's animated scene (video-scene.ts) frame by frame and
 * encodes it to an H.264 MP4, by the ffmpeg binary where there is one and by the WebAssembly encoder where
 * there is not, with a PNG of the first frame as its thumbnail. Frames are drawn into two buffers in turn, so
 * the next is drawn while the last goes down the pipe, and progress is reported as frames are handed over.
 */
import sharp from 'sharp';
import { ffmpegPath } from '../audio/ffmpeg-process.js';
import { seedFromText } from '../seeded-random.js';
import type { JobReporter } from '../pool/job-protocol.js';
import { startFfmpegH264 } from './ffmpeg-h264-encoder.js';
import type { FrameEncoder } from './frame-encoder.js';
import { applyBackdrop, readBackdrop } from './input-backdrop.js';
import { createFrame } from './pixel-frame.js';
import { checkVideoShape, frameCount, VIDEO_FPS } from './video-limits.js';
import { buildVideoScene } from './video-scene.js';

export interface RenderVideoInput {
  prompt: string;
  /** When absent, one is derived from the prompt, so an unseeded call is still repeatable. */
  seed?: number;
  width: number;
  height: number;
  seconds: number;
  /** png, jpeg or webp bytes to start from. */
  inputImage?: Uint8Array;
  /** A directory the caller owns and removes (also when the job is stopped): ffmpeg's temp file goes there. */
  workDir: string;
  /** The ffmpeg binary; `null` behaves as a platform without one. Default: `@ffmpeg-installer`'s. */
  ffmpeg?: string | null;
}

export interface RenderedVideo {
  video: Uint8Array;
  thumbnail: Uint8Array;
  frames: number;
  seconds: number;
  encoder: FrameEncoder['name'];
}

/** Progress held back for the end: reading the file back and the thumbnail. */
const FRAMES_SHARE = 96;

const silent: JobReporter = { progress: () => {}, childProcess: () => {}, part: () => {} };

export async function renderVideo(input: RenderVideoInput, reporter: JobReporter = silent): Promise<RenderedVideo> {
  const { width, height, seconds } = input;
  checkVideoShape({ width, height, seconds });
  const backdrop = input.inputImage ? await readBackdrop(input.inputImage, width, height) : undefined;
  const scene = buildVideoScene({
    prompt: input.prompt,
    seed: input.seed ?? seedFromText(input.prompt),
    width,
    height,
    seconds,
  });
  const total = frameCount(seconds);
  const binary = input.ffmpeg === null ? undefined : (input.ffmpeg ?? ffmpegPath());
  const encoder = binary
    ? startFfmpegH264({
        binary,
        width,
        height,
        fps: VIDEO_FPS,
        outputPath: `${input.workDir}/video.mp4`,
        onChild: reporter.childProcess,
      })
    : await (await import('./wasm-h264-encoder.js')).startWasmH264({ width, height, fps: VIDEO_FPS }); // loaded only where it is needed
  let finished = false;
  try {
    const frames = [createFrame(width, height), createFrame(width, height)];
    const handedOver: (Promise<void> | undefined)[] = [undefined, undefined];
    let reported = 0;
    let thumbnail: Promise<Buffer> | undefined;
    for (let index = 0; index < total; index++) {
      const slot = index % 2;
      await handedOver[slot];
      const frame = frames[slot]!; // slot is 0 or 1
      const t = index / VIDEO_FPS;
      scene.draw(frame, t);
      if (backdrop) {
        applyBackdrop(frame, backdrop, t);
      }
      if (index === 0) {
        thumbnail = sharp(frame.bytes.slice(), { raw: { width, height, channels: 4 } })
          .removeAlpha()
          .png()
          .toBuffer();
        thumbnail.catch(() => {}); // awaited below; this only keeps an early failure from being unhandled
      }
      const written = encoder.addFrame(frame.bytes).then(() => {
        const percent = Math.floor(((index + 1) / total) * FRAMES_SHARE);
        if (percent > reported) {
          reported = percent;
          reporter.progress(percent);
        }
      });
      written.catch(() => {});
      handedOver[slot] = written;
    }
    await Promise.all(handedOver);
    const video = await encoder.finish();
    finished = true;
    const png = await thumbnail!;
    reporter.progress(100);
    // Copies in ArrayBuffers of their own: the pool transfers them, and sharp's Buffers may not be transferable.
    return {
      video: new Uint8Array(video),
      thumbnail: new Uint8Array(png),
      frames: total,
      seconds: total / VIDEO_FPS,
      encoder: encoder.name,
    };
  } finally {
    if (!finished) {
      encoder.abort();
    }
  }
}
