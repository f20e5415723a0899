/** The sky's layers: its gradient, twinkling stars, the drifting sun or moon, a planet, clouds and birds. */
import { fillEllipse, fillGlow, fillSpan, mixPacked, packHex, strokeLine } from './pixel-frame.js';
import { triangle, wrap, type PaintLayer, type Stage } from './stage.js';

export function skyLayer(stage: Stage): PaintLayer {
  const { skyRows, width } = stage;
  return (frame) => {
    const rows = Math.min(frame.height, stage.horizon + 1);
    for (let y = 0; y < rows; y++) {
      frame.pixels.fill(skyRows[y]!, y * width, (y + 1) * width); // skyRows has a row per frame row
    }
  };
}

export function starsLayer(stage: Stage): PaintLayer {
  const { random, width, unit } = stage;
  const bottom = stage.horizon * 0.9;
  const count = Math.round((random.between(90, 160) * (width * bottom)) / (unit * unit));
  const white = packHex('#fffdf2');
  const stars = Array.from({ length: count }, () => ({
    x: random.between(0, width),
    y: random.between(0, bottom),
    size: random.chance(0.15) ? 2 : 1,
    rate: random.between(0.3, 1.4),
    phase: random.next(),
    depth: 0.05,
  }));
  return (frame, t) => {
    for (const star of stars) {
      const x = Math.round(wrap(star.x - stage.pan(t, star.depth), width));
      const y = Math.round(star.y);
      // Twinkle: each star's brightness rises and falls at its own rate.
      const shine = 0.35 + 0.65 * triangle(star.phase + t * star.rate);
      const colour = mixPacked(stage.skyRows[y]!, white, shine); // stars lie within the sky's rows
      for (let row = 0; row < star.size; row++) {
        fillSpan(frame, y + row, x, x + star.size * Math.max(1, unit / 720), colour);
      }
    }
  };
}

/** The sun or moon rises or sinks slowly along a shallow slope, with a glow; the moon has a few darker seas. */
export function bodyLayer(stage: Stage, kind: 'sun' | 'moon'): PaintLayer {
  const { random, width, unit, palette, reading } = stage;
  const radius = unit * (kind === 'sun' ? random.between(0.05, 0.08) : random.between(0.04, 0.06));
  const x0 = random.between(0.2, 0.8) * width;
  const lowSun = reading.sky === 'sunset' || reading.sky === 'dawn';
  const y0 = lowSun ? stage.horizon - radius * random.between(0.6, 1.6) : stage.horizon * random.between(0.18, 0.4);
  // Dawn rises, sunset sinks; day and night drift across.
  const rise = reading.sky === 'dawn' ? -1 : reading.sky === 'sunset' ? 1 : 0;
  const vx = unit * random.between(0.004, 0.01) * (random.chance(0.5) ? 1 : -1);
  const vy = unit * 0.006 * rise;
  const body = packHex(palette.body);
  const glow = packHex(palette.glow);
  const seas =
    kind === 'moon'
      ? Array.from({ length: 4 }, () => ({
          dx: random.between(-0.5, 0.5),
          dy: random.between(-0.5, 0.5),
          r: random.between(0.1, 0.25),
        }))
      : [];
  const seaColour = mixPacked(body, packHex('#8a8a9a'), 0.45);
  return (frame, t) => {
    const x = x0 + vx * t - stage.pan(t, 0.1);
    const y = y0 + vy * t;
    fillGlow(frame, x, y, radius * (kind === 'sun' ? 3.2 : 2.4), glow, kind === 'sun' ? 0.55 : 0.35);
    fillEllipse(frame, x, y, radius, radius, body);
    for (const sea of seas) {
      fillEllipse(frame, x + sea.dx * radius, y + sea.dy * radius, sea.r * radius, sea.r * radius, seaColour, 0.6);
    }
  };
}

export function planetLayer(stage: Stage): PaintLayer {
  const { random, width, unit } = stage;
  const radius = unit * random.between(0.1, 0.16);
  const x0 = random.between(0.25, 0.75) * width;
  const y0 = stage.height * random.between(0.2, 0.4);
  const colour = packHex(stage.accentsOr(['#c98b4f', '#6fa8dc', '#b07cc6'])[0]!); // accents, or these defaults
  const band = mixPacked(colour, packHex('#ffffff'), 0.35);
  const ring = packHex('#e8dcc0');
  return (frame, t) => {
    const x = x0 - stage.pan(t, 0.2);
    const y = y0 + unit * 0.004 * t;
    fillEllipse(frame, x, y, radius, radius, colour);
    fillEllipse(frame, x, y - radius * 0.25, radius * 0.92, radius * 0.12, band, 0.5);
    // The ring: a flat ellipse whose middle the planet's body covers again.
    fillEllipse(frame, x, y, radius * 1.9, radius * 0.28, ring, 0.55);
    fillEllipse(frame, x, y, radius * 1.55, radius * 0.17, colour, 1);
  };
}

export function cloudsLayer(stage: Stage): PaintLayer {
  const { random, width, unit, palette, reading } = stage;
  const stormy = reading.sky === 'storm';
  const count = random.integer(stormy ? 6 : 3, stormy ? 10 : 6);
  const colour = stormy
    ? packHex('#59616d')
    : mixPacked(packHex('#ffffff'), packHex(palette.shade), 1 - Math.max(0.35, palette.light));
  const period = width + unit;
  const clouds = Array.from({ length: count }, () => {
    const size = unit * random.between(0.08, 0.16);
    return {
      x: random.between(0, period),
      y: stage.horizon * random.between(0.08, stormy ? 0.5 : 0.6),
      speed: unit * random.between(0.01, 0.03),
      puffs: Array.from({ length: random.integer(3, 6) }, () => ({
        dx: random.between(-1.4, 1.4) * size,
        dy: random.between(-0.35, 0.2) * size,
        rx: random.between(0.5, 0.9) * size,
        ry: random.between(0.35, 0.6) * size,
      })),
      alpha: random.between(0.7, 0.92),
    };
  });
  return (frame, t) => {
    for (const cloud of clouds) {
      const x = wrap(cloud.x + cloud.speed * t - stage.pan(t, 0.3), period) - unit / 2;
      for (const puff of cloud.puffs) {
        fillEllipse(frame, x + puff.dx, cloud.y + puff.dy, puff.rx, puff.ry, colour, cloud.alpha);
      }
    }
  };
}

export function birdsLayer(stage: Stage): PaintLayer {
  const { random, width, unit } = stage;
  const colour = stage.palette.light > 0.5 ? packHex('#1d1d24') : packHex('#0a0a10');
  const period = width + unit * 0.4;
  const birds = Array.from({ length: random.integer(4, 9) }, () => ({
    x: random.between(0, period),
    y: stage.horizon * random.between(0.15, 0.6),
    span: unit * random.between(0.012, 0.022),
    speed: unit * random.between(0.04, 0.08),
    flap: random.between(2, 3.5),
    phase: random.next(),
  }));
  return (frame, t) => {
    for (const bird of birds) {
      const x = wrap(bird.x + bird.speed * t, period) - unit * 0.2;
      // Wings beat: the tips swing from above the body to below it.
      const lift = (triangle(bird.phase + t * bird.flap) - 0.5) * bird.span * 1.2;
      const thickness = Math.max(1, unit / 500);
      strokeLine(frame, x - bird.span, bird.y - lift, x, bird.y, thickness, colour);
      strokeLine(frame, x, bird.y, x + bird.span, bird.y - lift, thickness, colour);
    }
  };
}
