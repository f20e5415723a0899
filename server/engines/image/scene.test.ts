import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { brightnessOf } from './colour-mix.js';
import { buildScene, type SceneRequest } from './scene.js';

const request = (prompt: string, overrides: Partial<SceneRequest> = {}): SceneRequest => ({
  prompt,
  seed: 7,
  index: 0,
  width: 1024,
  height: 768,
  ...overrides,
});
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The colours of the sky gradient's stops, top to bottom. */
function skyStops(svg: string): string[] {
  const gradient = svg.match(/<linearGradient id="sky"[^>]*>(.*?)<\/linearGradient>/)?.[1] ?? '';
  return [...gradient.matchAll(/stop-color="(#[0-9a-f]{6})"/g)].map((match) => match[1]);
}

const meanBrightness = (colours: string[]) =>
  colours.reduce((sum, colour) => sum + brightnessOf(colour), 0) / colours.length;

describe('buildScene', () => {
  it('draws a night as a dark sky with a moon and stars, and a day as a bright one with a sun', () => {
    const night = buildScene(request('a quiet village at night')).svg;
    const day = buildScene(request('a quiet village on a sunny day')).svg;
    expect(meanBrightness(skyStops(night))).toBeLessThan(0.15);
    expect(meanBrightness(skyStops(day))).toBeGreaterThan(0.4);
    expect(night).toContain('<g id="moon">');
    expect(night).toMatch(/<g id="stars">(<circle [^>]+>){90,}<\/g>/);
    expect(night).not.toContain('<g id="sun">');
    expect(day).toContain('<g id="sun">');
    expect(day).not.toContain('<g id="moon">');
  });

  it('puts each named colour into the picture', () => {
    const { svg } = buildScene(request('a red and teal kite'));
    expect(svg).toContain('#e0323c');
    expect(svg).toContain('#119c9c');
    expect(buildScene(request('a kite')).svg).not.toContain('#e0323c');
  });

  it('draws the land the words name', () => {
    expect(buildScene(request('ocean waves')).svg).toMatch(/<g id="waves"[^>]*>(<path [^>]+>){7,}/);
    expect(buildScene(request('a city skyline')).svg).toContain('<g id="buildings">');
    expect(buildScene(request('a pine forest')).svg).toMatch(
      /<g id="trees">(<rect [^>]+>(<polygon [^>]+>){2,3}){18,}<\/g>/,
    );
    expect(buildScene(request('desert dunes')).svg).toContain('<g id="dunes">');
    expect(buildScene(request('snowy mountains')).svg).toMatch(/<g id="mountains">.*<g id="snowfall"/);
    expect(buildScene(request('a harbour with boats')).svg).toContain('<g id="boats">');
    expect(buildScene(request('a house on fire')).svg).toContain('<g id="flames"');
    const space = buildScene(request('a planet in space')).svg;
    expect(space).toContain('<g id="planet">');
    expect(space).not.toContain('<g id="ground">');
  });

  it('gives the same SVG for the same request, and another for another seed or index', () => {
    const prompt = 'a red fox in a snowy forest at sunset';
    const first = sha(buildScene(request(prompt)).svg);
    expect(sha(buildScene(request(prompt)).svg)).toBe(first);
    expect(sha(buildScene(request(prompt, { seed: 8 })).svg)).not.toBe(first);
    expect(sha(buildScene(request(prompt, { index: 1 })).svg)).not.toBe(first);
  });

  it('keeps every element inside a small, fixed budget whatever the size', () => {
    const small = buildScene(request('neon city at night in the rain', { width: 64, height: 64 })).svg;
    const large = buildScene(request('neon city at night in the rain', { width: 2048, height: 2048 })).svg;
    expect(small).toMatch(/^<svg [^>]*width="64" height="64" viewBox="0 0 64 64">/);
    expect(large).toMatch(/viewBox="0 0 2048 2048"/);
    const elements = (svg: string) => (svg.match(/<(rect|circle|path|polygon|ellipse)\b/g) ?? []).length;
    expect(elements(large)).toBeLessThan(3_000);
    expect(elements(large) / elements(small)).toBeLessThan(1.5);
    expect(small).not.toMatch(/<text/);
  });
});
