/**
 * A prompt's animated scene: the image engine's reading of the words (sky, land, objects, colours) decides
 * which layers move in it, and a random source seeded from SHA-256 of `prompt|seed|video` lays them out once.
 * A frame is then a function of its time alone, so the same request always gives the same frames, and any
 * frame can be drawn without drawing the ones before it.
 */
import { readPrompt, type PromptReading } from '../image/prompt-words.js';
import { seededRandom } from '../seeded-random.js';
import { birdsLayer, bodyLayer, cloudsLayer, planetLayer, skyLayer, starsLayer } from './paint-sky.js';
import {
  boatsLayer,
  cityLayer,
  flowersLayer,
  groundLayer,
  mountainsLayers,
  oceanLayer,
  treesLayer,
} from './paint-land.js';
import { flamesLayer, lanternsLayer, lightningLayer, rainLayer, snowLayer } from './paint-weather.js';
import type { PixelFrame } from './pixel-frame.js';
import { createStage, type PaintLayer } from './stage.js';

export interface VideoSceneRequest {
  prompt: string;
  seed: number;
  width: number;
  height: number;
  seconds: number;
}

export interface VideoScene {
  reading: PromptReading;
  /** Draws the whole picture at `t` seconds over `frame`. */
  draw(frame: PixelFrame, t: number): void;
}

export function buildVideoScene(request: VideoSceneRequest): VideoScene {
  const reading = readPrompt(request.prompt);
  const random = seededRandom(`${request.prompt}|${request.seed}|video`);
  const horizon = reading.land.length === 0 ? null : random.between(0.56, 0.66);
  const stage = createStage(request.width, request.height, request.seconds, random, reading, horizon);
  const { objects, land } = reading;
  const layers: PaintLayer[] = [skyLayer(stage)];
  if (objects.has('stars')) {
    layers.push(starsLayer(stage));
  }
  if (objects.has('planet')) {
    layers.push(planetLayer(stage));
  }
  if (objects.has('sun')) {
    layers.push(bodyLayer(stage, 'sun'));
  } else if (objects.has('moon')) {
    layers.push(bodyLayer(stage, 'moon'));
  }
  if (objects.has('clouds')) {
    layers.push(cloudsLayer(stage));
  }
  if (objects.has('birds')) {
    layers.push(birdsLayer(stage));
  }
  if (land.length > 0) {
    if (land.includes('mountain')) {
      layers.push(...mountainsLayers(stage));
    }
    if (objects.has('buildings')) {
      layers.push(cityLayer(stage));
    }
    if (land.includes('ocean')) {
      layers.push(oceanLayer(stage));
    }
    layers.push(groundLayer(stage));
    if (objects.has('boats') && land.includes('ocean')) {
      layers.push(boatsLayer(stage));
    }
    if (objects.has('trees')) {
      layers.push(treesLayer(stage));
    }
    if (objects.has('flowers')) {
      layers.push(flowersLayer(stage));
    }
  }
  if (objects.has('lightning')) {
    layers.push(lightningLayer(stage, request.seconds));
  }
  if (objects.has('flames')) {
    layers.push(flamesLayer(stage, request.seconds));
  }
  if (objects.has('rain')) {
    layers.push(rainLayer(stage));
  }
  if (objects.has('snowfall')) {
    layers.push(snowLayer(stage));
  }
  if (reading.accents.length > 0) {
    layers.push(lanternsLayer(stage));
  }
  return {
    reading,
    draw(frame, t) {
      for (const layer of layers) {
        layer(frame, t);
      }
    },
  };
}
