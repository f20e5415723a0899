import { describe, expect, it } from 'vitest';
import { planFromWords, type MusicPlan } from './music-words.js';

describe('planFromWords', () => {
  it.each<[string, string | undefined, Partial<MusicPlan>]>([
    [
      'Upbeat piano pop with strings, 128 BPM, bright and hopeful',
      undefined,
      { genre: 'pop', tempo: 128, mode: 'major', lead: 'piano', harmony: 'strings', drums: true, bass: true },
    ],
    [
      'solo piano, slow and melancholic',
      undefined,
      { lead: 'piano', harmony: 'piano', drums: false, bass: false, mode: 'minor' },
    ],
    ['ambient drone for meditation', undefined, { genre: 'ambient', lead: 'piano', harmony: 'pad', drums: false }],
    [
      'dark synthwave at 100 bpm',
      undefined,
      { genre: 'edm', tempo: 100, mode: 'minor', mood: 'dark', lead: 'synth', drums: true },
    ],
    ['lofi hip hop beats to study to', undefined, { genre: 'lofi', lead: 'electric-piano', drums: true }],
    [
      'energetic rock anthem with electric guitar',
      undefined,
      { genre: 'rock', lead: 'electric-guitar', drums: true, mode: 'major' },
    ],
    ['smooth jazz with brass and organ', undefined, { genre: 'jazz', lead: 'brass', harmony: 'organ', drums: true }],
    ['acoustic folk song in D major', undefined, { genre: 'folk', keyRoot: 2, mode: 'major', lead: 'guitar' }],
    [
      'classical string quartet in F# minor',
      undefined,
      { genre: 'classical', keyRoot: 6, mode: 'minor', lead: 'strings', drums: false },
    ],
    ['pop song, no drums, flute', undefined, { lead: 'flute', drums: false }],
    ['rock anthem with a guitar solo', undefined, { genre: 'rock', drums: true, bass: true }],
    ['', '[Verse]\nTears on my pillow, lonely night', { mode: 'minor', mood: 'sad' }],
    ['', '[Chorus]\nSunny days, we smile and dance', { mood: 'happy', mode: 'major' }],
  ])('%s / %s', (prompt, lyrics, expected) => {
    expect(planFromWords(prompt, lyrics)).toMatchObject(expected);
  });

  it('lets an explicit tempo win over the genre and mood', () => {
    expect(planFromWords('calm ambient 140 BPM').tempo).toBe(140);
    expect(planFromWords('edm, slow, 64 bpm').tempo).toBe(64);
  });

  it('plays a calm prompt slower than an energetic one of the same genre', () => {
    expect(planFromWords('calm relaxing rock').tempo).toBeLessThan(planFromWords('rock').tempo);
    expect(planFromWords('fast energetic rock').tempo).toBeGreaterThan(planFromWords('rock').tempo);
  });

  it('takes the mood from the prompt before the lyrics', () => {
    expect(planFromWords('happy upbeat pop', 'tears and sorrow').mood).toBe('energetic');
    expect(planFromWords('happy pop', 'tears and sorrow').mode).toBe('major');
  });

  it('leaves the key to the seed when none is named', () => {
    expect(planFromWords('upbeat pop').keyRoot).toBeUndefined();
    expect(planFromWords('a piece in Bb major').keyRoot).toBe(10);
  });
});
