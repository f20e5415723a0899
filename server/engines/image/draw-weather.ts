/** The layers over the whole picture: flames, rain, falling snow, and translucent discs of the accent colours. */
import { num, type SceneCanvas } from './scene-canvas.js';

export function drawFlames(canvas: SceneCanvas): string {
  const { random, unit, width, height } = canvas;
  canvas.defs.push(
    '<linearGradient id="flame" x1="0" y1="1" x2="0" y2="0"><stop offset="0" stop-color="#ff3b00"/><stop offset="0.5" stop-color="#ff8c00" stop-opacity="0.9"/><stop offset="1" stop-color="#ffe45c" stop-opacity="0.6"/></linearGradient>',
    `<filter id="flame-blur" x="-0.2" y="-0.2" width="1.4" height="1.4"><feGaussianBlur stdDeviation="${num(unit * 0.006)}"/></filter>`,
  );
  const parts: string[] = [];
  const count = random.integer(7, 11);
  for (let i = 0; i < count; i++) {
    const x = ((i + random.between(0, 1)) / count) * width;
    const half = unit * random.between(0.05, 0.1);
    const tall = height * random.between(0.15, 0.4);
    const lean = half * random.between(-0.8, 0.8);
    parts.push(
      `<path d="M${num(x - half)} ${height}Q${num(x - half)} ${num(height - tall * 0.5)} ${num(x + lean)} ${num(height - tall)}Q${num(x + half)} ${num(height - tall * 0.5)} ${num(x + half)} ${height}Z"/>`,
    );
  }
  const embers: string[] = [];
  for (let i = random.integer(25, 45); i > 0; i--) {
    embers.push(
      `<circle cx="${num(random.between(0, width))}" cy="${num(random.between(0.3, 1) * height)}" r="${num(unit * random.between(0.002, 0.005))}"/>`,
    );
  }
  return `<g id="flames" fill="url(#flame)" filter="url(#flame-blur)">${parts.join('')}</g><g id="embers" fill="#ffb347">${embers.join('')}</g>`;
}

export function drawRain(canvas: SceneCanvas): string {
  const { random, unit, width, height } = canvas;
  const parts: string[] = [];
  const slant = unit * random.between(0.005, 0.02);
  for (let i = random.integer(100, 150); i > 0; i--) {
    const x = random.between(-0.02, 1.02) * width;
    const y = random.between(-0.05, 1) * height;
    const length = unit * random.between(0.03, 0.06);
    parts.push(`<path d="M${num(x)} ${num(y)}l${num(-slant)} ${num(length)}"/>`);
  }
  return `<g id="rain" stroke="#b8c8de" stroke-opacity="0.5" stroke-width="${num(Math.max(1, unit * 0.0022))}" stroke-linecap="round">${parts.join('')}</g>`;
}

export function drawSnowfall(canvas: SceneCanvas): string {
  const { random, unit, width, height } = canvas;
  const parts: string[] = [];
  for (let i = random.integer(120, 180); i > 0; i--) {
    parts.push(
      `<circle cx="${num(random.between(0, width))}" cy="${num(random.between(0, height))}" r="${num(Math.max(0.6, unit * random.between(0.002, 0.006)))}" fill-opacity="${num(random.between(0.55, 0.95))}"/>`,
    );
  }
  return `<g id="snowfall" fill="#ffffff">${parts.join('')}</g>`;
}

/** Soft discs of each named colour, so a colour the scene has no other place for still shows. */
export function drawAccentDiscs(canvas: SceneCanvas): string {
  const { random, unit, width, height, reading } = canvas;
  const parts: string[] = [];
  for (let i = random.integer(6, 10); i > 0; i--) {
    parts.push(
      `<circle cx="${num(random.between(0, width))}" cy="${num(random.between(0, height))}" r="${num(unit * random.between(0.025, 0.07))}" fill="${random.pick(reading.accents)}" fill-opacity="${num(random.between(0.35, 0.6))}"/>`,
    );
  }
  return `<g id="accents">${parts.join('')}</g>`;
}
