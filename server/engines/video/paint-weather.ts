/**
 * The layers over the whole picture: falling rain and snow, flickering flames with rising embers, lightning
 * that flashes now and then, and translucent lanterns of the prompt's colours drifting upwards.
 */
import { fillEllipse, fillRect, fillSpan, mixPacked, packHex, strokeLine } from './pixel-frame.js';
import { triangle, wrap, type PaintLayer, type Stage } from './stage.js';

export function rainLayer(stage: Stage): PaintLayer {
  const { random, width, height, unit } = stage;
  const colour = packHex('#c8d4e6');
  const slant = random.between(-0.25, 0.1);
  const drops = Array.from(
    { length: Math.round(random.between(180, 260) * ((width * height) / (unit * unit))) },
    () => ({
      x: random.between(0, width),
      y: random.between(0, height),
      length: unit * random.between(0.025, 0.05),
      speed: unit * random.between(1.1, 1.6),
    }),
  );
  const thickness = Math.max(1, unit / 700);
  return (frame, t) => {
    for (const drop of drops) {
      const y = wrap(drop.y + drop.speed * t, height + drop.length) - drop.length;
      const x = wrap(drop.x + slant * drop.speed * t, width);
      strokeLine(frame, x, y, x + slant * drop.length, y + drop.length, thickness, colour, 0.5);
    }
  };
}

/** Flakes fall slowly and sway sideways, each at its own pace; nearer (bigger) flakes fall faster. */
export function snowLayer(stage: Stage): PaintLayer {
  const { random, width, height, unit } = stage;
  const white = packHex('#ffffff');
  const flakes = Array.from(
    { length: Math.round(random.between(140, 220) * ((width * height) / (unit * unit))) },
    () => {
      const near = random.next();
      return {
        x: random.between(0, width),
        y: random.between(0, height),
        r: unit * (0.002 + 0.005 * near),
        speed: unit * (0.05 + 0.12 * near),
        sway: unit * random.between(0.005, 0.02),
        rate: random.between(0.15, 0.4),
        phase: random.next(),
      };
    },
  );
  return (frame, t) => {
    for (const flake of flakes) {
      const y = wrap(flake.y + flake.speed * t, height + flake.r * 2) - flake.r;
      const x = wrap(
        flake.x + (triangle(flake.phase + t * flake.rate) - 0.5) * 2 * flake.sway - stage.pan(t, 1),
        width,
      );
      fillEllipse(frame, x, y, Math.max(0.8, flake.r), Math.max(0.8, flake.r), white, 0.9);
    }
  };
}

/**
 * Tongues of flame along the bottom whose heights flicker: each tongue follows a value noise of random heights
 * eased between, sampled at 8 per second, so the motion is lively but never jumps from frame to frame.
 */
export function flamesLayer(stage: Stage, seconds: number): PaintLayer {
  const { random, width, height, unit } = stage;
  const count = random.integer(8, 13);
  const tongues = Array.from({ length: count }, (_, index) => ({
    x: ((index + random.next()) / count) * width,
    half: unit * random.between(0.05, 0.1),
    tall: height * random.between(0.15, 0.35),
    noise: Float32Array.from({ length: Math.ceil(seconds * 8) + 2 }, () => random.between(0.6, 1.15)),
    lean: random.between(-0.5, 0.5),
  }));
  const outer = packHex('#ff3b00');
  const middle = packHex('#ff8c00');
  const inner = packHex('#ffe45c');
  const embers = Array.from({ length: random.integer(25, 45) }, () => ({
    x: random.between(0, width),
    y: random.between(0, height),
    r: unit * random.between(0.002, 0.005),
    speed: unit * random.between(0.08, 0.2),
  }));
  const ember = packHex('#ffb347');
  return (frame, t) => {
    for (const tongue of tongues) {
      const at = t * 8;
      const index = Math.floor(at);
      const fraction = at - index;
      const eased = fraction * fraction * (3 - 2 * fraction);
      // The noise has ceil(seconds * 8) + 2 values: index + 1 is within it for every t of the video.
      const scale = tongue.noise[index]! + (tongue.noise[index + 1]! - tongue.noise[index]!) * eased;
      const tall = tongue.tall * scale;
      for (const [colour, size, alpha] of [
        [outer, 1, 0.75],
        [middle, 0.7, 0.85],
        [inner, 0.4, 0.9],
      ] as const) {
        const top = height - tall * size;
        for (let y = Math.max(0, Math.round(top)); y < height; y++) {
          // A tongue narrows to a point: its width goes with the square root of the distance from the tip.
          const along = (y - top) / (tall * size);
          const half = tongue.half * size * Math.sqrt(along);
          const centre = tongue.x + tongue.lean * tongue.half * (1 - along) * (scale - 0.6) * 3;
          fillSpan(frame, y, centre - half, centre + half, colour, alpha);
        }
      }
    }
    for (const spark of embers) {
      const y = wrap(spark.y - spark.speed * t, height);
      fillEllipse(frame, spark.x, y, spark.r, spark.r, ember);
    }
  };
}

/** A few strikes over the video: the sky flashes pale and a jagged bolt shows for a few frames. */
export function lightningLayer(stage: Stage, seconds: number): PaintLayer {
  const { random, width, unit, horizon } = stage;
  const strikes = Array.from({ length: Math.max(1, Math.round(seconds / random.between(2.5, 4))) }, () => {
    const points: [number, number][] = [[random.between(0.2, 0.8) * width, 0]];
    // points starts with one point and only grows.
    while (points[points.length - 1]![1] < horizon * 0.85) {
      const [x, y] = points[points.length - 1]!;
      points.push([x + random.between(-0.06, 0.06) * unit, y + random.between(0.04, 0.09) * unit]);
    }
    return { at: random.between(0.3, Math.max(0.4, seconds - 0.3)), points };
  });
  const bolt = packHex('#f4f6ff');
  const flash = packHex('#dfe6f5');
  const thickness = Math.max(2, unit / 300);
  return (frame, t) => {
    for (const strike of strikes) {
      const since = t - strike.at;
      if (since < 0 || since > 0.25) {
        continue;
      }
      const strength = 1 - since / 0.25;
      fillRect(frame, 0, 0, width, horizon, flash, 0.35 * strength);
      for (let i = 1; i < strike.points.length; i++) {
        const [x0, y0] = strike.points[i - 1]!; // 1 ≤ i < points.length
        const [x1, y1] = strike.points[i]!;
        strokeLine(frame, x0, y0, x1, y1, thickness, bolt, strength);
      }
    }
  };
}

/** The prompt's colours, as soft lanterns rising slowly through the picture. */
export function lanternsLayer(stage: Stage): PaintLayer {
  const { random, width, height, unit, reading } = stage;
  const lanterns = Array.from({ length: random.integer(3, 6) }, () => ({
    x: random.between(0.05, 0.95) * width,
    y: random.between(0, height),
    r: unit * random.between(0.03, 0.07),
    speed: unit * random.between(0.01, 0.03),
    colour: packHex(random.pick(reading.accents)),
  }));
  return (frame, t) => {
    for (const lantern of lanterns) {
      const y = wrap(lantern.y - lantern.speed * t, height + lantern.r * 2) - lantern.r;
      fillEllipse(frame, lantern.x, y, lantern.r, lantern.r, lantern.colour, 0.3);
      fillEllipse(
        frame,
        lantern.x,
        y,
        lantern.r * 0.55,
        lantern.r * 0.55,
        mixPacked(lantern.colour, packHex('#ffffff'), 0.3),
        0.3,
      );
    }
  };
}
