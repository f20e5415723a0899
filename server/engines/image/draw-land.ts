/**
 * The land layers of a scene: mountains, a city skyline on the horizon, the sea or the ground, and what stands
 * on them (boats, trees, flowers). Several land words combine: the sea fills the view and the other land kind
 * becomes the near shore, so "a forest by the lake" is water behind trees.
 */
import type { LandTheme } from './prompt-words.js';
import { num, type SceneCanvas } from './scene-canvas.js';

type GroundKind = 'snow' | 'desert' | 'forest' | 'field' | 'beach' | 'city';

const GROUND_COLOURS: Record<GroundKind, [string, string, string]> = {
  snow: ['#e3eaf2', '#eef3f8', '#f7fafc'],
  desert: ['#f0c27a', '#e0a95c', '#cf9346'],
  forest: ['#4f8a3a', '#3c7530', '#2d6125'],
  field: ['#8cc063', '#6fae4a', '#4f9a3a'],
  beach: ['#ecd9a6', '#e3cb8e', '#d9bd78'],
  city: ['#3a3f4a', '#30343d', '#262a31'],
};

/** The first land kind that can be stood on, in the order a scene shows it best. */
function groundKindOf(land: readonly LandTheme[]): GroundKind | undefined {
  const kinds: GroundKind[] = ['snow', 'desert', 'forest', 'field', 'beach', 'city'];
  return kinds.find((kind) => land.includes(kind));
}

/** A jagged ridge across the width, closed down to `base`. */
function ridge(canvas: SceneCanvas, peakLow: number, peakHigh: number, base: number, fill: string): string {
  const { random, width } = canvas;
  const points = [`0,${num(base)}`];
  const steps = random.integer(5, 9);
  for (let i = 0; i <= steps; i++) {
    const x = (width * i) / steps + (i > 0 && i < steps ? random.between(-0.3, 0.3) * (width / steps) : 0);
    points.push(`${num(x)},${num(random.between(peakHigh, peakLow))}`);
  }
  points.push(`${width},${num(base)}`);
  return `<polygon points="${points.join(' ')}" fill="${fill}"/>`;
}

export function drawMountains(canvas: SceneCanvas): string {
  const { horizon, height } = canvas;
  const snowy = canvas.reading.land.includes('snow');
  const far = canvas.lit('#7a7f9a');
  const near = canvas.lit(snowy ? '#f2f5fa' : '#56637a');
  return `<g id="mountains">${ridge(canvas, horizon - height * 0.12, horizon - height * 0.36, horizon + 1, far)}${ridge(canvas, horizon - height * 0.02, horizon - height * 0.2, horizon + 1, near)}</g>`;
}

export function drawSkyline(canvas: SceneCanvas): string {
  const { random, unit, horizon, width } = canvas;
  const night = canvas.palette.light < 0.5;
  const windowColours = canvas.accentsOr(night ? ['#ffd36b', '#ffe9a8'] : ['#cfe3f5', '#a9c7e8']);
  const parts: string[] = [];
  for (const row of ['back', 'front'] as const) {
    const colour = canvas.lit(row === 'back' ? '#6a7488' : '#3e4656');
    let x = -unit * random.between(0, 0.05);
    while (x < width) {
      const buildingWidth = unit * random.between(0.06, 0.13);
      const buildingHeight = horizon * (row === 'back' ? random.between(0.3, 0.65) : random.between(0.12, 0.5));
      const top = horizon - buildingHeight;
      parts.push(
        `<rect x="${num(x)}" y="${num(top)}" width="${num(buildingWidth - unit * 0.004)}" height="${num(buildingHeight + 1)}" fill="${colour}"/>`,
      );
      if (row === 'front') {
        const pitchX = unit * 0.024;
        const pitchY = unit * 0.032;
        const columns = Math.max(1, Math.floor((buildingWidth - pitchX * 0.5) / pitchX));
        const rows = Math.floor((buildingHeight - pitchY) / pitchY);
        const windowColour = random.pick(windowColours);
        for (let r = 0; r < rows; r++) {
          for (let c = 0; c < columns; c++) {
            if (random.chance(night ? 0.45 : 0.3)) {
              parts.push(
                `<rect x="${num(x + pitchX * 0.5 + c * pitchX)}" y="${num(top + pitchY * 0.6 + r * pitchY)}" width="${num(unit * 0.012)}" height="${num(unit * 0.016)}" fill="${windowColour}"/>`,
              );
            }
          }
        }
      }
      x += buildingWidth;
    }
  }
  return `<g id="buildings">${parts.join('')}</g>`;
}

/** Rolling bands of ground from `top` down, back to front, each a little darker. */
function rollingBands(canvas: SceneCanvas, top: number, colours: readonly string[], id: string): string {
  const { random, width, height } = canvas;
  const parts: string[] = [];
  colours.forEach((colour, index) => {
    const y = top + ((height - top) * index) / colours.length;
    const swell = (height - top) * random.between(0.05, 0.15);
    const rise = random.between(0.2, 0.8) * width;
    // The back band meets the horizon at both edges, so no sliver of sky shows under the land.
    const sag = index === 0 ? 0 : swell;
    parts.push(
      `<path d="M0 ${num(y + sag * random.between(0, 1))}Q${num(rise)} ${num(y - swell)} ${width} ${num(y + sag * random.between(0, 1))}L${width} ${height}L0 ${height}Z" fill="${canvas.lit(colour)}"/>`,
    );
  });
  return `<g id="${id}">${parts.join('')}</g>`;
}

function drawSea(canvas: SceneCanvas, bottom: number): string {
  const { random, unit, horizon, width } = canvas;
  canvas.defs.push(
    `<linearGradient id="sea-shade" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${canvas.lit('#4a8fc2')}"/><stop offset="1" stop-color="${canvas.lit('#163f6b')}"/></linearGradient>`,
  );
  const waves: string[] = [];
  const rows = random.integer(7, 11);
  for (let row = 0; row < rows; row++) {
    // Rows crowd towards the horizon, as waves seen from the shore do.
    const depth = (row + 1) / rows;
    const y = horizon + (bottom - horizon) * depth * depth;
    const length = width * random.between(0.06, 0.14) * (0.5 + depth);
    const rise = unit * 0.012 * (0.4 + depth);
    for (let k = random.integer(2, 5); k > 0; k--) {
      const x = random.between(-0.05, 1) * width;
      waves.push(
        `<path d="M${num(x)} ${num(y)}Q${num(x + length / 4)} ${num(y - rise)} ${num(x + length / 2)} ${num(y)}T${num(x + length)} ${num(y)}"/>`,
      );
    }
  }
  const opacity = canvas.palette.light > 0.5 ? 0.6 : 0.3;
  return `<g id="sea"><rect y="${num(horizon)}" width="${width}" height="${num(canvas.height - horizon)}" fill="url(#sea-shade)"/></g><g id="waves" fill="none" stroke="#ffffff" stroke-opacity="${opacity}" stroke-width="${num(unit * 0.003)}" stroke-linecap="round">${waves.join('')}</g>`;
}

function drawBoats(canvas: SceneCanvas, shore: number): string {
  const { random, unit, horizon } = canvas;
  const sails = canvas.accentsOr(['#ffffff', '#f4efe2']);
  const parts: string[] = [];
  const count = random.integer(1, 3);
  for (let i = 0; i < count; i++) {
    const depth = random.between(0.1, 0.8);
    const y = horizon + (shore - horizon) * depth;
    const size = unit * (0.03 + 0.07 * depth);
    const x = random.between(0.1, 0.9) * canvas.width;
    parts.push(
      `<path d="M${num(x - size)} ${num(y - size * 0.25)}L${num(x + size)} ${num(y - size * 0.25)}L${num(x + size * 0.7)} ${num(y)}L${num(x - size * 0.7)} ${num(y)}Z" fill="${canvas.lit('#4a2f22')}"/>`,
      `<path d="M${num(x)} ${num(y - size * 0.3)}L${num(x)} ${num(y - size * 1.6)}L${num(x + size * 0.8)} ${num(y - size * 0.35)}Z" fill="${canvas.lit(random.pick(sails))}"/>`,
    );
  }
  return `<g id="boats">${parts.join('')}</g>`;
}

function pine(canvas: SceneCanvas, x: number, y: number, size: number, snowy: boolean): string {
  const width = size * 0.55;
  const green = canvas.lit('#1f5a2e');
  const trunk = `<rect x="${num(x - size * 0.04)}" y="${num(y - size * 0.2)}" width="${num(size * 0.08)}" height="${num(size * 0.2)}" fill="${canvas.lit('#4a3222')}"/>`;
  const lower = `<polygon points="${num(x)},${num(y - size * 0.75)} ${num(x - width / 2)},${num(y - size * 0.15)} ${num(x + width / 2)},${num(y - size * 0.15)}" fill="${green}"/>`;
  const upper = `<polygon points="${num(x)},${num(y - size)} ${num(x - width * 0.35)},${num(y - size * 0.5)} ${num(x + width * 0.35)},${num(y - size * 0.5)}" fill="${green}"/>`;
  const cap = snowy
    ? `<polygon points="${num(x)},${num(y - size)} ${num(x - width * 0.15)},${num(y - size * 0.8)} ${num(x + width * 0.15)},${num(y - size * 0.8)}" fill="${canvas.lit('#f4f8fb')}"/>`
    : '';
  return trunk + lower + upper + cap;
}

function roundTree(canvas: SceneCanvas, x: number, y: number, size: number): string {
  return `<rect x="${num(x - size * 0.05)}" y="${num(y - size * 0.45)}" width="${num(size * 0.1)}" height="${num(size * 0.45)}" fill="${canvas.lit('#6b4a2b')}"/><circle cx="${num(x)}" cy="${num(y - size * 0.6)}" r="${num(size * 0.3)}" fill="${canvas.lit(canvas.random.pick(['#3f8f3a', '#4f9d3f', '#357a33']))}"/>`;
}

function drawTrees(canvas: SceneCanvas, stand: number, many: boolean): string {
  const { random, unit, height, reading } = canvas;
  const pines = reading.land.some((theme) => theme === 'forest' || theme === 'snow' || theme === 'mountain');
  const snowy = reading.land.includes('snow');
  const count = many ? random.integer(18, 30) : random.integer(4, 9);
  const trees = Array.from({ length: count }, () => ({
    x: random.between(-0.02, 1.02) * canvas.width,
    y: stand + (height - stand) * random.between(0.04, 1),
  }));
  // Nearer trees (lower on the picture) are bigger and drawn last, over the far ones.
  trees.sort((a, b) => a.y - b.y);
  const parts = trees.map(({ x, y }) => {
    const size = unit * random.between(0.1, 0.16) * (0.5 + (1.2 * (y - stand)) / Math.max(1, height - stand));
    return pines ? pine(canvas, x, y, size, snowy) : roundTree(canvas, x, y, size);
  });
  return `<g id="trees">${parts.join('')}</g>`;
}

function drawFlowers(canvas: SceneCanvas, stand: number): string {
  const { random, unit, height } = canvas;
  const colours = canvas.accentsOr(['#ff5f7e', '#ffd23f', '#ffffff', '#c86bfa']);
  const parts: string[] = [];
  const count = random.integer(30, 60);
  for (let i = 0; i < count; i++) {
    const y = stand + (height - stand) * random.between(0.15, 1);
    const x = random.between(0, 1) * canvas.width;
    const radius = unit * random.between(0.006, 0.013) * (0.5 + (y - stand) / Math.max(1, height - stand));
    parts.push(
      `<circle cx="${num(x)}" cy="${num(y)}" r="${num(radius)}" fill="${canvas.lit(random.pick(colours))}"/><circle cx="${num(x)}" cy="${num(y)}" r="${num(radius * 0.35)}" fill="${canvas.lit('#ffcc33')}"/>`,
    );
  }
  return `<g id="flowers">${parts.join('')}</g>`;
}

/** Everything from the horizon down. */
export function drawLand(canvas: SceneCanvas): string {
  const { reading, random, height, horizon } = canvas;
  const land = reading.land;
  if (land.length === 0) {
    return '';
  }
  const parts: string[] = [];
  if (land.includes('mountain') || land.includes('snow')) {
    parts.push(drawMountains(canvas));
  }
  if (reading.objects.has('buildings')) {
    parts.push(drawSkyline(canvas));
  }
  const water = land.includes('ocean') || land.includes('beach');
  const ground = groundKindOf(land.filter((theme) => theme !== 'city' || !water));
  let stand = horizon;
  if (water) {
    const shore = ground ? horizon + (height - horizon) * random.between(0.45, 0.6) : height;
    parts.push(drawSea(canvas, shore));
    if (reading.objects.has('boats') || (!ground && random.chance(0.5))) {
      parts.push(drawBoats(canvas, shore));
    }
    if (ground) {
      parts.push(rollingBands(canvas, shore, GROUND_COLOURS[ground].slice(0, 2), 'shore'));
    }
    stand = shore;
  } else if (ground) {
    parts.push(rollingBands(canvas, horizon, GROUND_COLOURS[ground], ground === 'desert' ? 'dunes' : 'ground'));
  }
  if (ground && ground !== 'city') {
    if (reading.objects.has('trees')) {
      parts.push(drawTrees(canvas, stand, land.includes('forest')));
    }
    if (reading.objects.has('flowers')) {
      parts.push(drawFlowers(canvas, stand));
    }
  }
  return parts.join('');
}
