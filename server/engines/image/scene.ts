/**
 * Builds the SVG of one image from its prompt: the prompt's reading decides what is drawn, and a random source
 * seeded from SHA-256 of `prompt|seed|index` decides where, so the same request always gives the same scene
 * and each of `n` images is its own. The scene holds no text, so the rendered pixels cannot depend on which
 * fonts a machine has.
 */
import { drawLand } from './draw-land.js';
import {
  drawBirds,
  drawClouds,
  drawLightning,
  drawMoon,
  drawNebulae,
  drawPlanet,
  drawSkyGradient,
  drawStars,
  drawSun,
} from './draw-sky.js';
import { drawAccentDiscs, drawFlames, drawRain, drawSnowfall } from './draw-weather.js';
import { readPrompt, type PromptReading } from './prompt-words.js';
import { createCanvas } from './scene-canvas.js';
import { seededRandom } from '../seeded-random.js';

export interface SceneRequest {
  prompt: string;
  seed: number;
  /** Which of the `n` images of one call this is (0-based). */
  index: number;
  width: number;
  height: number;
}

export interface Scene {
  svg: string;
  reading: PromptReading;
}

export function buildScene(request: SceneRequest): Scene {
  const reading = readPrompt(request.prompt);
  const random = seededRandom(`${request.prompt}|${request.seed}|${request.index}`);
  const canvas = createCanvas(
    request.width,
    request.height,
    random,
    reading,
    reading.land.length === 0 ? null : random.between(0.56, 0.66),
  );
  const { objects } = reading;
  const layers = [drawSkyGradient(canvas)];
  if (reading.sky === 'space') {
    layers.push(drawNebulae(canvas));
  }
  if (objects.has('stars')) {
    layers.push(drawStars(canvas));
  }
  if (objects.has('planet')) {
    layers.push(drawPlanet(canvas));
  }
  if (objects.has('sun')) {
    layers.push(drawSun(canvas));
  } else if (objects.has('moon')) {
    layers.push(drawMoon(canvas));
  }
  if (objects.has('clouds')) {
    layers.push(drawClouds(canvas));
  }
  if (objects.has('lightning')) {
    layers.push(drawLightning(canvas));
  }
  if (objects.has('birds')) {
    layers.push(drawBirds(canvas));
  }
  layers.push(drawLand(canvas));
  if (objects.has('flames')) {
    layers.push(drawFlames(canvas));
  }
  if (objects.has('rain')) {
    layers.push(drawRain(canvas));
  }
  if (objects.has('snowfall')) {
    layers.push(drawSnowfall(canvas));
  }
  if (reading.accents.length > 0) {
    layers.push(drawAccentDiscs(canvas));
  }
  const { width, height } = request;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><defs>${canvas.defs.join('')}</defs>${layers.join('')}</svg>`;
  return { svg, reading };
}
