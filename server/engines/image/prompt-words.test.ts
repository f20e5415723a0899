import { describe, expect, it } from 'vitest';
import { readPrompt } from './prompt-words.js';

describe('readPrompt', () => {
  it.each([
    [
      'a red fox in a snowy forest at sunset',
      { sky: 'sunset', land: ['forest', 'snow'], objects: ['sun', 'trees', 'snowfall'] },
    ],
    [
      'neon city skyline at night, purple and cyan',
      { sky: 'night', land: ['city'], objects: ['moon', 'stars', 'buildings'] },
    ],
    ['calm ocean waves under a golden sun', { sky: 'day', land: ['ocean'], objects: ['sun'] }],
    ['ringed planet in deep space', { sky: 'space', land: [], objects: ['planet', 'stars'] }],
    ['desert dunes at dusk', { sky: 'sunset', land: ['desert'], objects: ['sun'] }],
    ['stormy sea with sailboats', { sky: 'storm', land: ['ocean'], objects: ['clouds', 'rain', 'lightning', 'boats'] }],
    ['burning houses', { sky: 'fire', land: ['field'], objects: ['flames'] }],
    ['a flower meadow with birds', { sky: 'day', land: ['field'], objects: ['flowers', 'birds', 'sun'] }],
  ])('reads %j', (prompt, want) => {
    const reading = readPrompt(prompt);
    expect(reading.sky).toBe(want.sky);
    expect(reading.land).toEqual(want.land);
    for (const object of want.objects) {
      expect(reading.objects.has(object as never), object).toBe(true);
    }
  });

  it('lets the stronger sky win and keeps the weaker one’s objects', () => {
    const reading = readPrompt('a rainy night');
    expect(reading.sky).toBe('night');
    expect(reading.objects.has('rain')).toBe(true);
    expect(reading.objects.has('moon')).toBe(true);
    expect(reading.objects.has('sun')).toBe(false);
  });

  it('collects each colour once, in prompt order', () => {
    expect(readPrompt('Purple and CYAN lights, more purple, a red door').accents).toEqual([
      '#9b3fd6',
      '#1fd2f0',
      '#e0323c',
    ]);
  });

  it('reads nothing special into words it does not know', () => {
    const reading = readPrompt('a quiet portrait of a philosopher');
    expect(reading).toMatchObject({ sky: 'day', land: ['field'], accents: [] });
  });
});
