/** The sky layers of a scene, back to front: gradient, nebulae, stars, sun or moon, planet, clouds, birds. */
import { mixColours } from './colour-mix.js';
import { num, type SceneCanvas } from './scene-canvas.js';

export function drawSkyGradient(canvas: SceneCanvas): string {
  const [top, ...lower] = canvas.palette.stops;
  // The first colour named tints the lower sky, so "a red sky" or "purple dusk" shows at a glance.
  const tint = canvas.reading.accents[0];
  const [middle, bottom] = tint ? lower.map((stop) => mixColours(stop, tint, 0.4)) : lower;
  // The gradient ends at the horizon, so the brightest band sits where the land begins, as in a real sky.
  const end = Math.min(1, canvas.horizon / canvas.height);
  canvas.defs.push(
    `<linearGradient id="sky" x1="0" y1="0" x2="0" y2="${num(end)}"><stop offset="0" stop-color="${top}"/><stop offset="0.55" stop-color="${middle}"/><stop offset="1" stop-color="${bottom}"/></linearGradient>`,
  );
  return `<rect id="sky-fill" width="${canvas.width}" height="${canvas.height}" fill="url(#sky)"/>`;
}

/** Soft clouds of the accent colours (or violet and teal) behind the stars. */
export function drawNebulae(canvas: SceneCanvas): string {
  const { random, unit } = canvas;
  const colours = canvas.accentsOr(['#7b3fd6', '#1f8fb0', '#c23a8a']);
  const parts: string[] = [];
  colours.forEach((colour, index) => {
    canvas.defs.push(
      `<radialGradient id="nebula-${index}"><stop offset="0" stop-color="${colour}" stop-opacity="0.45"/><stop offset="1" stop-color="${colour}" stop-opacity="0"/></radialGradient>`,
    );
  });
  const count = random.integer(3, 5);
  for (let i = 0; i < count; i++) {
    const gradient = `nebula-${i % colours.length}`;
    parts.push(
      `<ellipse cx="${num(random.between(0, canvas.width))}" cy="${num(random.between(0, canvas.horizon))}" rx="${num(unit * random.between(0.25, 0.5))}" ry="${num(unit * random.between(0.12, 0.3))}" fill="url(#${gradient})"/>`,
    );
  }
  return `<g id="nebulae">${parts.join('')}</g>`;
}

export function drawStars(canvas: SceneCanvas): string {
  const { random, unit } = canvas;
  const parts: string[] = [];
  const count = random.integer(90, 150);
  for (let i = 0; i < count; i++) {
    parts.push(
      `<circle cx="${num(random.between(0, canvas.width))}" cy="${num(random.between(0, canvas.horizon * 0.95))}" r="${num(Math.max(0.5, unit * random.between(0.0012, 0.0035)))}" fill="#ffffff" fill-opacity="${num(random.between(0.35, 1))}"/>`,
    );
  }
  return `<g id="stars">${parts.join('')}</g>`;
}

function glowDefinition(canvas: SceneCanvas): string {
  canvas.defs.push(
    `<radialGradient id="glow"><stop offset="0" stop-color="${canvas.palette.glow}" stop-opacity="0.7"/><stop offset="0.35" stop-color="${canvas.palette.glow}" stop-opacity="0.25"/><stop offset="1" stop-color="${canvas.palette.glow}" stop-opacity="0"/></radialGradient>`,
  );
  return 'url(#glow)';
}

export function drawSun(canvas: SceneCanvas): string {
  const { random, unit, horizon } = canvas;
  const radius = unit * random.between(0.06, 0.1);
  const x = canvas.width * random.between(0.2, 0.8);
  // A sun sets and rises on the horizon; at midday it stands high.
  const low = canvas.reading.sky === 'sunset' || canvas.reading.sky === 'dawn';
  // Mountains would hide a low sun, so it sets above their peaks instead.
  const ridge = canvas.reading.land.some((theme) => theme === 'mountain' || theme === 'snow') ? canvas.height * 0.3 : 0;
  const y = low ? horizon - ridge - radius * random.between(0.2, 1.6) : horizon * random.between(0.18, 0.4);
  const glow = glowDefinition(canvas);
  return `<g id="sun"><circle cx="${num(x)}" cy="${num(y)}" r="${num(radius * 4)}" fill="${glow}"/><circle cx="${num(x)}" cy="${num(y)}" r="${num(radius)}" fill="${canvas.palette.body}"/></g>`;
}

export function drawMoon(canvas: SceneCanvas): string {
  const { random, unit, horizon } = canvas;
  const radius = unit * random.between(0.045, 0.075);
  const x = canvas.width * random.between(0.15, 0.85);
  const y = horizon * random.between(0.15, 0.45);
  const glow = glowDefinition(canvas);
  // A crescent half the time: the disc masked by a shifted one, so the sky shows through the bite.
  const crescent = random.chance(0.5);
  let mask = '';
  if (crescent) {
    const shift = radius * random.between(0.35, 0.6) * (random.chance(0.5) ? 1 : -1);
    canvas.defs.push(
      `<mask id="moon-bite"><rect width="${canvas.width}" height="${canvas.height}" fill="#ffffff"/><circle cx="${num(x + shift)}" cy="${num(y - radius * 0.2)}" r="${num(radius)}" fill="#000000"/></mask>`,
    );
    mask = ' mask="url(#moon-bite)"';
  }
  return `<g id="moon"><circle cx="${num(x)}" cy="${num(y)}" r="${num(radius * 3.5)}" fill="${glow}"/><circle cx="${num(x)}" cy="${num(y)}" r="${num(radius)}" fill="${canvas.palette.body}"${mask}/></g>`;
}

export function drawPlanet(canvas: SceneCanvas): string {
  const { random, unit } = canvas;
  const colour = canvas.accentsOr(['#d9955b', '#6fa8dc', '#c27ba0'])[0];
  const radius = unit * random.between(0.1, 0.18);
  const x = canvas.width * random.between(0.25, 0.75);
  const y = canvas.horizon * random.between(0.3, 0.6);
  canvas.defs.push(
    `<radialGradient id="planet-shade" cx="0.35" cy="0.35" r="0.75"><stop offset="0" stop-color="#ffffff" stop-opacity="0.35"/><stop offset="0.5" stop-color="${colour}" stop-opacity="0"/><stop offset="1" stop-color="#000000" stop-opacity="0.6"/></radialGradient>`,
  );
  const tilt = random.between(-25, 25);
  const ring = `<ellipse cx="${num(x)}" cy="${num(y)}" rx="${num(radius * 1.9)}" ry="${num(radius * 0.45)}" fill="none" stroke="#f0e0c0" stroke-opacity="0.75" stroke-width="${num(unit * 0.008)}" transform="rotate(${num(tilt)} ${num(x)} ${num(y)})"/>`;
  return `<g id="planet"><circle cx="${num(x)}" cy="${num(y)}" r="${num(radius)}" fill="${colour}"/><circle cx="${num(x)}" cy="${num(y)}" r="${num(radius)}" fill="url(#planet-shade)"/>${ring}</g>`;
}

export function drawClouds(canvas: SceneCanvas): string {
  const { random, unit } = canvas;
  const storm = canvas.reading.sky === 'storm';
  const fill = storm ? '#59616d' : canvas.lit('#ffffff');
  const parts: string[] = [];
  const count = storm ? random.integer(6, 9) : random.integer(3, 6);
  for (let i = 0; i < count; i++) {
    const x = random.between(-0.1, 1.1) * canvas.width;
    const y = random.between(0.08, 0.5) * canvas.horizon;
    const size = unit * random.between(0.05, 0.1) * (storm ? 1.6 : 1);
    const puffs: string[] = [];
    for (let p = 0; p < 5; p++) {
      puffs.push(
        `<ellipse cx="${num(x + (p - 2) * size * 0.8)}" cy="${num(y - (p === 1 || p === 3 ? size * 0.35 : p === 2 ? size * 0.6 : 0))}" rx="${num(size * random.between(0.8, 1.1))}" ry="${num(size * random.between(0.55, 0.75))}"/>`,
      );
    }
    parts.push(`<g fill="${fill}" fill-opacity="${storm ? 0.92 : 0.85}">${puffs.join('')}</g>`);
  }
  return `<g id="clouds">${parts.join('')}</g>`;
}

export function drawBirds(canvas: SceneCanvas): string {
  const { random, unit } = canvas;
  const colour = canvas.palette.light > 0.5 ? '#2a2a35' : '#0a0a12';
  const parts: string[] = [];
  const count = random.integer(3, 7);
  const centreX = canvas.width * random.between(0.25, 0.75);
  const centreY = canvas.horizon * random.between(0.25, 0.55);
  for (let i = 0; i < count; i++) {
    const x = centreX + unit * random.between(-0.2, 0.2);
    const y = centreY + unit * random.between(-0.08, 0.08);
    const span = unit * random.between(0.015, 0.03);
    parts.push(
      `<path d="M${num(x - span)} ${num(y)}Q${num(x - span / 2)} ${num(y - span / 2)} ${num(x)} ${num(y)}Q${num(x + span / 2)} ${num(y - span / 2)} ${num(x + span)} ${num(y)}"/>`,
    );
  }
  return `<g id="birds" fill="none" stroke="${colour}" stroke-width="${num(unit * 0.004)}" stroke-linecap="round">${parts.join('')}</g>`;
}

export function drawLightning(canvas: SceneCanvas): string {
  const { random, unit } = canvas;
  let x = canvas.width * random.between(0.2, 0.8);
  let y = canvas.horizon * 0.2;
  const points = [`${num(x)},${num(y)}`];
  while (y < canvas.horizon) {
    x += unit * random.between(-0.05, 0.05);
    y += unit * random.between(0.04, 0.08);
    points.push(`${num(x)},${num(Math.min(y, canvas.horizon))}`);
  }
  return `<polyline id="lightning" points="${points.join(' ')}" fill="none" stroke="#fff8c8" stroke-width="${num(unit * 0.006)}" stroke-linejoin="bevel"/>`;
}
