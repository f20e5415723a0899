/**
 * The land's layers: mountains and a city skyline on the horizon, the ground or the sea with moving waves,
 * and what stands on them (trees, boats, flowers). The land words combine as in the image engine: the sea
 * fills the view and another land kind becomes the near shore. Scenery is built wider than the frame so the
 * camera's pan never runs out of it; nearer layers pan further (parallax).
 */
import type { LandTheme } from '../image/prompt-words.js';
import { fillEllipse, fillRect, fillSpan, mixPacked, packHex } from './pixel-frame.js';
import { triangle, wrap, type PaintLayer, type Stage } from './stage.js';

type GroundKind = 'snow' | 'desert' | 'forest' | 'field' | 'beach' | 'city';

/** The image engine's ground colours (near the horizon → nearest), so a video and an image of a prompt agree. */
const GROUND_COLOURS: Record<GroundKind, [string, string]> = {
  snow: ['#e3eaf2', '#f7fafc'],
  desert: ['#f0c27a', '#cf9346'],
  forest: ['#4f8a3a', '#2d6125'],
  field: ['#8cc063', '#4f9a3a'],
  beach: ['#ecd9a6', '#d9bd78'],
  city: ['#3a3f4a', '#262a31'],
};

function groundKindOf(land: readonly LandTheme[]): GroundKind | undefined {
  const kinds: GroundKind[] = ['snow', 'desert', 'forest', 'field', 'beach', 'city'];
  return kinds.find((kind) => land.includes(kind));
}

/** Where the sea ends and the near shore begins (the full height when there is no other land). */
export function shoreLine(stage: Stage): number {
  const { reading, horizon, height } = stage;
  if (!reading.land.includes('ocean')) {
    return horizon;
  }
  return groundKindOf(reading.land) ? Math.round(horizon + (height - horizon) * 0.62) : height;
}

/** A jagged ridge over `columns`: heights (pixels above `base`) joined by straight slopes between random peaks. */
function ridgeHeights(stage: Stage, columns: number, low: number, high: number, steps: number): Float32Array {
  const { random } = stage;
  const peaks = Array.from({ length: steps + 1 }, () => random.between(low, high));
  const heights = new Float32Array(columns);
  for (let x = 0; x < columns; x++) {
    const along = (x / columns) * steps;
    const index = Math.floor(along);
    const fraction = along - index;
    heights[x] = peaks[index]! + (peaks[Math.min(steps, index + 1)]! - peaks[index]!) * fraction; // index ≤ steps
  }
  return heights;
}

/** Column fills of a ridge: from its top down to `base`, shaded per row from `top` to `bottom` colour. */
function paintRidge(
  stage: Stage,
  heights: Float32Array,
  base: number,
  depth: number,
  top: number,
  bottom: number,
  cap: number | null,
): PaintLayer {
  const { width } = stage;
  const highest = Math.max(...heights);
  const firstRow = Math.max(0, Math.floor(base - highest));
  const rowColours = new Uint32Array(Math.max(1, Math.ceil(base) - firstRow + 1));
  for (let row = 0; row < rowColours.length; row++) {
    rowColours[row] = mixPacked(top, bottom, row / rowColours.length);
  }
  const capLine = base - highest * 0.72;
  return (frame, t) => {
    const offset = Math.round(stage.pan(t, depth));
    const pixels = frame.pixels;
    const lastRow = Math.min(frame.height, Math.ceil(base));
    for (let x = 0; x < width; x++) {
      const top = Math.max(0, Math.round(base - heights[wrap(x + offset, heights.length)]!));
      for (let y = top; y < lastRow; y++) {
        // firstRow ≤ top ≤ y < lastRow ≤ ceil(base): within rowColours.
        pixels[y * width + x] = cap !== null && y < capLine ? cap : rowColours[y - firstRow]!;
      }
    }
  };
}

export function mountainsLayers(stage: Stage): PaintLayer[] {
  const { width, unit, horizon, reading } = stage;
  const columns = Math.ceil(width + stage.maxPan + unit);
  const snowy = reading.land.includes('snow');
  const cap = snowy ? stage.lit('#f4f8fb') : null;
  const far = ridgeHeights(stage, columns, unit * 0.1, unit * 0.32, stage.random.integer(5, 9));
  const near = ridgeHeights(stage, columns, unit * 0.04, unit * 0.18, stage.random.integer(6, 11));
  return [
    paintRidge(stage, far, horizon + 1, 0.25, stage.lit('#7a7f9a'), stage.lit('#5d6380'), cap),
    paintRidge(
      stage,
      near,
      horizon + 1,
      0.45,
      stage.lit(snowy ? '#e6ebf3' : '#56637a'),
      stage.lit(snowy ? '#c9d3e0' : '#3e4a5e'),
      null,
    ),
  ];
}

export function cityLayer(stage: Stage): PaintLayer {
  const { random, width, unit, horizon, reading } = stage;
  const night = reading.sky === 'night' || reading.sky === 'sunset' || reading.sky === 'storm';
  const columns = Math.ceil(width + stage.maxPan + unit);
  const windowColours = stage.accentsOr(night ? ['#ffd36b', '#ffe9a8'] : ['#cfe3f5', '#a9c7e8']).map(packHex);
  const dark = stage.lit('#30343d');
  const buildings: {
    x: number;
    w: number;
    h: number;
    colour: number;
    windows: { dx: number; dy: number; colour: number; rate: number; phase: number }[];
  }[] = [];
  for (let x = 0; x < columns; ) {
    const w = unit * random.between(0.05, 0.12);
    const h = unit * random.between(0.08, 0.4);
    const colour = stage.lit(random.pick(['#3e4656', '#4a5366', '#343a48', '#566076']));
    const windows = [];
    const cell = Math.max(3, unit * 0.018);
    for (let dy = cell; dy < h - cell; dy += cell * 1.6) {
      for (let dx = cell * 0.6; dx < w - cell; dx += cell * 1.4) {
        if (random.chance(night ? 0.55 : 0.35)) {
          windows.push({
            dx,
            dy,
            colour: random.pick(windowColours),
            rate: random.chance(0.1) ? random.between(0.2, 0.6) : 0,
            phase: random.next(),
          });
        }
      }
    }
    buildings.push({ x, w, h, colour, windows });
    x += w + unit * random.between(0, 0.02);
  }
  const cell = Math.max(2, unit * 0.01);
  return (frame, t) => {
    const offset = stage.pan(t, 0.6);
    for (const building of buildings) {
      const left = building.x - offset;
      const shifted = left < -building.w ? left + columns : left > columns - building.w ? left - columns : left;
      if (shifted > width || shifted + building.w < 0) {
        continue;
      }
      const top = horizon - building.h;
      fillRect(frame, shifted, top, building.w, building.h + 1, building.colour);
      for (const light of building.windows) {
        // A few windows go dark and light again, as people come and go.
        const on = light.rate === 0 || triangle(light.phase + t * light.rate) > 0.3;
        fillRect(frame, shifted + light.dx, top + light.dy, cell, cell * 1.2, on ? light.colour : dark);
      }
    }
  };
}

export function groundLayer(stage: Stage): PaintLayer {
  const { reading, height, width } = stage;
  const kind = groundKindOf(reading.land) ?? 'field';
  const from = shoreLine(stage);
  const [near, far] = GROUND_COLOURS[kind];
  const rows = new Uint32Array(height);
  for (let y = from; y < height; y++) {
    rows[y] = mixPacked(stage.lit(near), stage.lit(far), (y - from) / Math.max(1, height - from));
  }
  return (frame) => {
    for (let y = from; y < height; y++) {
      frame.pixels.fill(rows[y]!, y * width, (y + 1) * width);
    }
  };
}

/** The sea: a gradient from the horizon down, crossed by light wave crests that roll sideways and grow nearer. */
export function oceanLayer(stage: Stage): PaintLayer {
  const { random, width, unit, horizon } = stage;
  const bottom = shoreLine(stage);
  const top = stage.lit('#4a8fc2');
  const deep = stage.lit('#163f6b');
  const crest = mixPacked(top, packHex('#ffffff'), 0.55);
  const rows: {
    y: number;
    colour: number;
    crestRow: boolean;
    period: number;
    length: number;
    phase: number;
    speed: number;
  }[] = [];
  let nextCrest = horizon + 2;
  for (let y = horizon; y < bottom; y++) {
    const depth = (y - horizon) / Math.max(1, bottom - horizon);
    const crestRow = y >= nextCrest;
    if (crestRow) {
      nextCrest = y + Math.max(2, Math.round(unit * (0.006 + 0.04 * depth)));
    }
    rows.push({
      y,
      colour: mixPacked(top, deep, depth),
      crestRow,
      period: unit * (0.06 + 0.35 * depth),
      length: unit * (0.015 + 0.12 * depth),
      phase: random.next(),
      speed: unit * (0.01 + 0.05 * depth) * (random.chance(0.5) ? 1 : -1),
    });
  }
  const thickness = Math.max(1, Math.round(unit / 600));
  return (frame, t) => {
    for (const row of rows) {
      frame.pixels.fill(row.colour, row.y * width, (row.y + 1) * width);
    }
    for (const row of rows) {
      if (!row.crestRow) {
        continue;
      }
      const start = -wrap(row.phase * row.period + row.speed * t + stage.pan(t, 0.8), row.period);
      for (let x = start; x < width; x += row.period) {
        for (let line = 0; line < thickness; line++) {
          fillSpan(frame, row.y + line, x, x + row.length, crest, 0.45);
        }
      }
    }
  };
}

export function boatsLayer(stage: Stage): PaintLayer {
  const { random, width, unit, horizon } = stage;
  const bottom = shoreLine(stage);
  const hull = stage.lit('#4a2f22');
  const sails = stage.accentsOr(['#ffffff', '#f4efe2']).map((hex) => stage.lit(hex));
  const period = width + unit * 0.3;
  const boats = Array.from({ length: random.integer(1, 3) }, () => {
    const y = horizon + (bottom - horizon) * random.between(0.15, 0.6);
    const size = unit * (0.03 + 0.08 * ((y - horizon) / Math.max(1, bottom - horizon)));
    return {
      x: random.between(0, period),
      y,
      size,
      speed: unit * random.between(0.005, 0.015),
      sail: random.pick(sails),
      phase: random.next(),
    };
  });
  return (frame, t) => {
    for (const boat of boats) {
      const x = wrap(boat.x + boat.speed * t - stage.pan(t, 0.7), period) - unit * 0.15;
      const y = boat.y + (triangle(boat.phase + t * 0.5) - 0.5) * boat.size * 0.15;
      const { size } = boat;
      fillRect(frame, x - size, y - size * 0.22, size * 2, size * 0.22, hull);
      // The sail: a right triangle, one span per row.
      const sailTop = y - size * 1.5;
      for (let row = Math.round(sailTop); row < y - size * 0.25; row++) {
        const along = (row - sailTop) / (size * 1.25);
        fillSpan(frame, row, x - size * 0.05, x + size * 0.9 * along, boat.sail);
      }
    }
  };
}

/** Pines along the horizon (a forest) or a few broad trees standing in the field. */
export function treesLayer(stage: Stage): PaintLayer {
  const { random, width, unit, horizon, reading, height } = stage;
  const forest = reading.land.includes('forest');
  const columns = Math.ceil(width + stage.maxPan + unit);
  const snowy = reading.land.includes('snow');
  const green = stage.lit('#1f5a2e');
  const leaf = stage.lit('#3f8f3a');
  const trunk = stage.lit('#4a3222');
  const cap = stage.lit('#f4f8fb');
  const base = Math.max(horizon, shoreLine(stage));
  const trees = Array.from({ length: forest ? random.integer(14, 26) : random.integer(2, 5) }, () => {
    const y = forest
      ? base + random.between(0, 0.08) * (height - base)
      : base + random.between(0.05, 0.5) * (height - base);
    return {
      x: random.between(0, columns),
      y,
      size: unit * random.between(0.08, 0.18) * (0.6 + (y - horizon) / Math.max(1, height - horizon)),
      sway: random.next(),
    };
  }).sort((a, b) => a.y - b.y);
  return (frame, t) => {
    for (const tree of trees) {
      const x = wrap(tree.x - stage.pan(t, 0.85), columns) - unit * 0.5;
      const { size, y } = tree;
      if (x + size < 0 || x - size > width) {
        continue;
      }
      fillRect(frame, x - size * 0.04, y - size * 0.2, size * 0.08, size * 0.2, trunk);
      if (forest) {
        // A pine: its crown leans a little with the wind.
        const lean = (triangle(tree.sway + t * 0.25) - 0.5) * size * 0.06;
        const top = y - size;
        for (let row = Math.round(top); row < y - size * 0.15; row++) {
          const along = (row - top) / (size * 0.85);
          const half = size * 0.3 * along;
          const centre = x + lean * (1 - along);
          fillSpan(frame, row, centre - half, centre + half, snowy && along < 0.25 ? cap : green);
        }
      } else {
        fillEllipse(frame, x, y - size * 0.55, size * 0.3, size * 0.3, leaf);
      }
    }
  };
}

export function flowersLayer(stage: Stage): PaintLayer {
  const { random, width, unit, height } = stage;
  const top = shoreLine(stage);
  const colours = stage.accentsOr(['#ff5f7e', '#ffd23f', '#ffffff', '#c86bfa']).map((hex) => stage.lit(hex));
  const heart = stage.lit('#ffcc33');
  const columns = Math.ceil(width + stage.maxPan + unit);
  const flowers = Array.from({ length: random.integer(30, 60) }, () => {
    const y = top + random.between(0.1, 1) * (height - top);
    return {
      x: random.between(0, columns),
      y,
      r: unit * 0.012 * (0.5 + (y - top) / Math.max(1, height - top)),
      colour: random.pick(colours),
      sway: random.next(),
    };
  });
  return (frame, t) => {
    for (const flower of flowers) {
      const x =
        wrap(flower.x - stage.pan(t, 1), columns) - unit * 0.5 + (triangle(flower.sway + t * 0.4) - 0.5) * flower.r;
      fillEllipse(frame, x, flower.y, flower.r, flower.r, flower.colour);
      fillEllipse(frame, x, flower.y, flower.r * 0.35, flower.r * 0.35, heart);
    }
  };
}
