import { describe, expect, it } from 'vitest';
import { createFrame, type PixelFrame } from './pixel-frame.js';
import { buildVideoScene } from './video-scene.js';

const WIDTH = 320;
const HEIGHT = 240;

function drawAt(prompt: string, t: number, seed = 1, seconds = 4): PixelFrame {
  const frame = createFrame(WIDTH, HEIGHT);
  buildVideoScene({ prompt, seed, width: WIDTH, height: HEIGHT, seconds }).draw(frame, t);
  return frame;
}

/** Pixels of the upper half that are nearly white: falling snow against a night sky. */
function whiteInSky(frame: PixelFrame): Set<number> {
  const found = new Set<number>();
  for (let index = 0; index < (WIDTH * HEIGHT) / 2; index++) {
    const [r, g, b] = frame.bytes.subarray(index * 4, index * 4 + 3);
    if (r > 215 && g > 215 && b > 215) {
      found.add(index);
    }
  }
  return found;
}

describe('video scenes', () => {
  it('draws every pixel opaque, and the same frame for the same request and time', () => {
    const first = drawAt('a harbour with boats at sunset', 1.5);
    const again = drawAt('a harbour with boats at sunset', 1.5);
    expect(Buffer.from(first.bytes).equals(Buffer.from(again.bytes))).toBe(true);
    for (let index = 3; index < first.bytes.length; index += 4) {
      if (first.bytes[index] !== 255) {
        throw new Error(`pixel ${index / 4} is not opaque`);
      }
    }
    expect(Buffer.from(drawAt('a harbour with boats at sunset', 1.5, 2).bytes).equals(Buffer.from(first.bytes))).toBe(
      false,
    );
  });

  it('lets snow fall: white flakes fill a night sky and are elsewhere a moment later', () => {
    const snowy = drawAt('snowfall on a winter night', 1);
    const later = drawAt('snowfall on a winter night', 1.5);
    const plain = drawAt('a field at night', 1);
    const flakes = whiteInSky(snowy);
    // Stars and the moon are white too, but there are far fewer of their pixels than of flakes.
    expect(flakes.size).toBeGreaterThan(whiteInSky(plain).size * 3);
    const moved = whiteInSky(later);
    const stayed = [...flakes].filter((index) => moved.has(index)).length;
    expect(stayed / flakes.size).toBeLessThan(0.5);
  });

  it('flickers flames: the bottom of a fire changes between frames a quarter second apart', () => {
    const at = (t: number) => drawAt('a forest fire', t).bytes.subarray(WIDTH * 4 * Math.round(HEIGHT * 0.7));
    const first = at(1);
    const second = at(1.25);
    let differing = 0;
    for (let index = 0; index < first.length; index += 4) {
      differing += first[index] !== second[index] || first[index + 1] !== second[index + 1] ? 1 : 0;
    }
    expect(differing).toBeGreaterThan((first.length / 4) * 0.03);
  });

  it('reads the words as the image engine does', () => {
    expect(
      buildVideoScene({ prompt: 'snowy dunes at dusk', seed: 1, width: 64, height: 64, seconds: 1 }).reading,
    ).toMatchObject({
      sky: 'sunset',
      land: ['snow', 'desert'],
    });
  });
});
