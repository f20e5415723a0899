import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { composeSong, formOf, TICKS_PER_BEAT, type Song } from './compose.js';
import { planFromWords } from './music-words.js';
import { songToMidi } from './song-midi.js';

const sha256 = (bytes: ArrayBuffer) => createHash('sha256').update(new Uint8Array(bytes)).digest('hex');
const midiHash = (song: Song) => sha256(songToMidi(song).writeMIDI());
const pop = planFromWords('Upbeat piano pop with strings, 128 BPM, bright and hopeful');

function notesOf(song: Song, part: string) {
  return song.parts.find((candidate) => candidate.name === part)?.notes ?? [];
}

/** The melody pitches of bars [from, from + count), relative to their bar's start. */
function melodyBars(song: Song, from: number, count: number): string {
  const bar = 4 * TICKS_PER_BEAT;
  return notesOf(song, 'melody')
    .filter((note) => note.tick >= from * bar && note.tick < (from + count) * bar)
    .map((note) => `${note.tick - from * bar}:${note.pitch}`)
    .join(' ');
}

describe('composeSong', () => {
  it('gives the same MIDI for the same plan, duration and seed', () => {
    expect(midiHash(composeSong(pop, 30, 42))).toBe(midiHash(composeSong(pop, 30, 42)));
  });

  it('gives a different piece for another seed or another prompt', () => {
    const reference = midiHash(composeSong(pop, 30, 42));
    expect(midiHash(composeSong(pop, 30, 43))).not.toBe(reference);
    expect(midiHash(composeSong(planFromWords('dark ambient drone'), 30, 42))).not.toBe(reference);
  });

  it('writes a format-1 MIDI file with a conductor track and one track per part', () => {
    const song = composeSong(pop, 20, 7);
    const bytes = new Uint8Array(songToMidi(song).writeMIDI());
    const view = new DataView(bytes.buffer);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('MThd');
    expect(view.getUint16(8)).toBe(1); // format
    expect(view.getUint16(10)).toBe(song.parts.length + 1); // tracks
    expect(view.getUint16(12)).toBe(TICKS_PER_BEAT);
    expect(song.parts.map((part) => part.name)).toEqual(['melody', 'chords', 'bass', 'drums']);
  });

  it('builds a 60 s piece from sections, not one loop: intro, verse, chorus, ending', () => {
    const song = composeSong(pop, 60, 42);
    const names = song.sections.map((section) => section.name);
    expect(names[0]).toBe('intro');
    expect(names).toContain('verse');
    expect(names).toContain('chorus');
    expect(names[names.length - 1]).toBe('ending');
    const verse = song.sections.find((section) => section.name === 'verse')!;
    const chorus = song.sections.find((section) => section.name === 'chorus')!;
    expect(melodyBars(song, verse.bar, 4)).not.toBe(melodyBars(song, chorus.bar, 4));
    // The chorus sits higher than the verse.
    const mean = (from: number) => {
      const pitches = melodyBars(song, from, 4)
        .split(' ')
        .map((item) => Number(item.split(':')[1]));
      return pitches.reduce((sum, pitch) => sum + pitch, 0) / pitches.length;
    };
    expect(mean(chorus.bar)).toBeGreaterThan(mean(verse.bar));
    // Some 4-bar window of the melody is never repeated note for note across the whole piece.
    const windows = new Set<string>();
    const lastBar = song.sections[song.sections.length - 1].bar;
    for (let bar = 0; bar + 4 <= lastBar; bar += 4) {
      windows.add(melodyBars(song, bar, 4));
    }
    expect(windows.size).toBeGreaterThan(3);
  });

  it('varies the second verse instead of repeating the first', () => {
    const song = composeSong(pop, 120, 5);
    const verses = song.sections.filter((section) => section.name === 'verse');
    expect(verses.length).toBeGreaterThanOrEqual(2);
    expect(melodyBars(song, verses[1].bar, 8)).not.toBe(melodyBars(song, verses[0].bar, 8));
  });

  it('ends on the tonic, every note inside the requested length', () => {
    for (const duration of [1, 3, 10, 45]) {
      const song = composeSong(pop, duration, 11);
      expect(song.endTick).toBe(Math.round((duration * pop.tempo * TICKS_PER_BEAT) / 60));
      for (const part of song.parts) {
        for (const note of part.notes) {
          expect(note.tick + note.duration).toBeLessThanOrEqual(song.endTick);
          expect(note.pitch).toBeGreaterThanOrEqual(0);
          expect(note.pitch).toBeLessThan(128);
          expect(note.velocity).toBeGreaterThan(0);
          expect(note.velocity).toBeLessThan(128);
        }
      }
      const bass = notesOf(song, 'bass');
      expect(bass[bass.length - 1].pitch % 12).toBe(song.keyRoot);
    }
  });

  it('drops the drums and bass of a solo piano piece and keeps its named key', () => {
    const song = composeSong(planFromWords('solo piano nocturne in E minor'), 30, 1);
    expect(song.parts.map((part) => part.name)).toEqual(['melody', 'chords']);
    expect(song.parts.every((part) => part.program === 0)).toBe(true);
    expect(song.keyRoot).toBe(4);
  });

  it('plays four kicks a bar in edm and a backbeat in rock', () => {
    const kicksPerBar = (prompt: string) => {
      const song = composeSong(planFromWords(prompt), 60, 3);
      const chorus = song.sections.find((section) => section.name === 'chorus')!;
      const bar = 4 * TICKS_PER_BEAT;
      return notesOf(song, 'drums').filter(
        (note) => note.pitch === 36 && note.tick >= (chorus.bar + 1) * bar && note.tick < (chorus.bar + 2) * bar,
      ).length;
    };
    expect(kicksPerBar('edm club track')).toBe(4);
    expect(kicksPerBar('rock')).toBe(4);
    expect(kicksPerBar('acoustic folk')).toBe(3);
  });
});

describe('formOf', () => {
  it.each([
    [0, []],
    [3, ['verse']],
    [8, ['intro', 'verse']],
    [18, ['intro', 'verse', 'chorus']],
    [60, ['intro', 'verse', 'chorus', 'verse', 'chorus', 'bridge', 'chorus', 'verse', 'chorus']],
  ])('%i bars → %j', (bars, names) => {
    const sections = formOf(bars);
    expect(sections.map((section) => section.name)).toEqual(names);
    expect(sections.reduce((sum, section) => sum + section.bars, 0)).toBe(bars);
  });
});

describe('the longest piece', () => {
  it('fills 300 s at a fast tempo with sections and ends on time', () => {
    const plan = planFromWords('fast edm, 176 bpm');
    const song = composeSong(plan, 300, 99);
    expect(song.endTick).toBe(300 * 176 * 8);
    expect(song.sections.length).toBeGreaterThan(20);
    const drums = notesOf(song, 'drums');
    expect(drums[drums.length - 1].tick).toBeGreaterThan(song.endTick - 4 * 4 * TICKS_PER_BEAT);
  });
});
