/**
 * H.264 by `h264-mp4-encoder` (minih264 compiled to WebAssembly, MIT), for platforms where no ffmpeg binary
 * exists or it is unwanted (GPL). It makes Constrained Baseline only, is about three times slower than
 * ffmpeg, and writes `moov` at the end, which `moveMoovFirst` fixes. It encodes synchronously inside the
 * worker, so the pool's stop (terminating the worker) ends it; there is no child and no temp file to clean.
 */
// A CommonJS module whose named exports Node cannot detect: its default export is the whole `module.exports`.
import h264Mp4Encoder from 'h264-mp4-encoder';
import type { FrameEncoder, FrameEncoderOptions } from './frame-encoder.js';
import { moveMoovFirst } from './moov-first.js';

/** minih264's quantiser (10–51) and speed (0 best – 10 fastest): about the size ffmpeg's CRF 23 gives, twice as fast as speed 0. */
const QUANTIZER = 30;
const SPEED = 8;

export async function startWasmH264(options: FrameEncoderOptions): Promise<FrameEncoder> {
  const encoder = await h264Mp4Encoder.createH264MP4Encoder();
  encoder.width = options.width;
  encoder.height = options.height;
  encoder.frameRate = options.fps;
  encoder.quantizationParameter = QUANTIZER;
  encoder.speed = SPEED;
  encoder.groupOfPictures = options.fps * 2;
  encoder.initialize();
  let freed = false;
  const free = () => {
    if (!freed) {
      freed = true;
      encoder.delete();
    }
  };
  return {
    name: 'wasm',
    async addFrame(rgba) {
      encoder.addFrameRgba(rgba);
    },
    async finish() {
      try {
        encoder.finalize();
        const file = encoder.FS.readFile(encoder.outputFilename);
        encoder.FS.unlink(encoder.outputFilename);
        return moveMoovFirst(new Uint8Array(file));
      } finally {
        free();
      }
    },
    abort: free,
  };
}
