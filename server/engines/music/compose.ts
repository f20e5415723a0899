/**
 * A plan and a seed → a song in notes: a form (intro, verses, choruses, a bridge, a cadence), a chord
 * progression per section, a melody on chord tones whose motif returns with variation, a bass line, the chords
 * on a second instrument, and drums by genre. Everything random comes from the seed, so the same plan,
 * duration and seed give the same notes. `song-midi.ts` turns the result into a Standard MIDI File.
 */
import { drumBar, DRUM, type Intensity } from './drum-patterns.js';
import { GM_PROGRAM, type Genre, type Mode, type MusicPlan } from './music-words.js';
import { seededRandom, type SeededRandom as Random } from '../seeded-random.js';

export const TICKS_PER_BEAT = 480;
const BEATS_PER_BAR = 4;
const BAR = TICKS_PER_BEAT * BEATS_PER_BAR;
const EIGHTH = TICKS_PER_BEAT / 2;
const SIXTEENTH = TICKS_PER_BEAT / 4;

export type SectionName = 'intro' | 'verse' | 'chorus' | 'bridge' | 'ending';

export interface Section {
  name: SectionName;
  /** First bar, counted from 0. */
  bar: number;
  bars: number;
}

export interface Note {
  tick: number;
  duration: number;
  pitch: number;
  velocity: number;
}

export interface Part {
  name: 'melody' | 'chords' | 'bass' | 'drums';
  channel: number;
  program: number;
  /** CC 7, CC 10 and CC 91: level, pan and reverb send. */
  volume: number;
  pan: number;
  reverb: number;
  notes: Note[];
}

export interface Song {
  tempo: number;
  /** Pitch class of the tonic. */
  keyRoot: number;
  sections: Section[];
  /** The tick where the last chord stops sounding: the whole requested duration. */
  endTick: number;
  parts: Part[];
}

const SCALES = { major: [0, 2, 4, 5, 7, 9, 11], minor: [0, 2, 3, 5, 7, 8, 10] } as const;

/** Four chords a phrase, as scale degrees (0 = tonic). */
const PROGRESSIONS: Record<Mode, readonly (readonly number[])[]> = {
  major: [
    [0, 4, 5, 3],
    [0, 5, 3, 4],
    [0, 3, 4, 3],
    [5, 3, 0, 4],
    [0, 3, 5, 4],
    [1, 4, 0, 5],
  ],
  minor: [
    [0, 5, 2, 6],
    [0, 3, 4, 0],
    [0, 6, 5, 6],
    [0, 3, 5, 4],
    [0, 5, 3, 4],
    [3, 4, 0, 0],
  ],
} as const;

/** Bars of the rhythm library, in eighth notes summing to a 4/4 bar; a negative length is a rest. */
const RHYTHMS = {
  busy: [
    [1, 1, 2, 1, 1, 2],
    [2, 1, 1, 2, 2],
    [1, 1, 1, 1, 2, 2],
    [3, 1, 2, 1, 1],
    [2, 2, 1, 1, 2],
  ],
  even: [
    [2, 2, 2, 2],
    [3, 1, 2, 2],
    [2, 1, 1, 4],
    [4, 2, 2],
    [2, 2, 4],
    [3, 3, 2],
    [-2, 2, 2, 2],
  ],
  slow: [[4, 4], [6, 2], [8], [4, 2, 2], [-2, 2, 4]],
} as const;

interface Chord {
  degree: number;
  /** Semitones above the tonic, root first. */
  tones: number[];
}

interface Motif {
  rhythms: (readonly number[])[];
  /** Scale-step leanings, one per note, reused on every repeat so the tune is recognisable. */
  moves: number[];
}

function chordOf(degree: number, plan: MusicPlan, sevenths: boolean, dominant = false): Chord {
  const scale = SCALES[plan.mode];
  // Scales have seven steps; a chord has at least three tones.
  const tone = (step: number) => scale[(degree + step) % 7]! + 12 * Math.floor((degree + step) / 7);
  const tones = [tone(0), tone(2), tone(4)];
  if (sevenths) {
    tones.push(tone(6));
  }
  if (dominant && plan.mode === 'minor' && degree === 4) {
    // Harmonic minor: a major V, so the final cadence pulls home.
    tones[1]! += 1;
  }
  return { degree, tones };
}

/** Bars of music before the final chord, leaving it room to ring (at least ~1.2 s, or a quarter of a short piece). */
function musicBars(durationSeconds: number, tempo: number): number {
  const barSeconds = (BAR / TICKS_PER_BEAT) * (60 / tempo);
  const ring = Math.min(2, Math.max(0.5, durationSeconds * 0.25));
  return Math.max(0, Math.floor((durationSeconds - ring) / barSeconds));
}

/** The form: an intro, then verse and chorus in turn with a bridge after the second chorus, the last bar a cadence. */
export function formOf(bars: number): Section[] {
  if (bars === 0) {
    return [];
  }
  if (bars <= 4) {
    return [{ name: 'verse', bar: 0, bars }];
  }
  const sections: Section[] = [];
  let bar = 0;
  const push = (name: SectionName, length: number) => {
    const fitted = Math.min(length, bars - bar);
    if (fitted > 0) {
      sections.push({ name, bar, bars: fitted });
      bar += fitted;
    }
  };
  push('intro', bars >= 16 ? 4 : 2);
  const cycle: [SectionName, number][] = [
    ['verse', 8],
    ['chorus', 8],
    ['verse', 8],
    ['chorus', 8],
    ['bridge', 4],
    ['chorus', 8],
  ];
  for (let index = 0; bar < bars; index += 1) {
    const [name, length] = (index < cycle.length ? cycle[index] : cycle[(index - cycle.length) % 2 === 0 ? 2 : 3])!;
    push(name, length);
  }
  // A stub of one or two bars at the end sounds like a mistake: fold it into the section before.
  const last = sections[sections.length - 1];
  if (last !== undefined && sections.length > 1 && last.bars <= 2) {
    sections.pop();
    sections[sections.length - 1]!.bars += last.bars;
  }
  return sections;
}

function intensityOf(section: SectionName): Intensity {
  return section === 'intro' ? 'intro' : section === 'chorus' || section === 'ending' ? 'chorus' : 'verse';
}

function rhythmPool(plan: MusicPlan): readonly (readonly number[])[] {
  if (plan.genre === 'ambient' || plan.mood === 'calm' || plan.tempo < 76) {
    return [...RHYTHMS.slow, ...RHYTHMS.even.slice(0, 4)];
  }
  if (plan.mood === 'energetic' || plan.tempo > 130) {
    return [...RHYTHMS.even, ...RHYTHMS.busy.slice(0, 3)];
  }
  return plan.tempo < 96 ? [...RHYTHMS.even, ...RHYTHMS.busy] : RHYTHMS.even;
}

function makeMotif(plan: MusicPlan, random: Random): Motif {
  const pool = rhythmPool(plan);
  const rhythms = [random.pick(pool), random.pick(pool)];
  const moves = Array.from({ length: 16 }, () => random.pick([-2, -1, -1, 0, 1, 1, 2]));
  return { rhythms, moves };
}

/** A varied repeat: the same rhythm, a few leanings changed. */
function varyMotif(motif: Motif, random: Random, amount: number): Motif {
  return {
    rhythms: motif.rhythms,
    moves: motif.moves.map((move) => (random.chance(amount) ? random.pick([-2, -1, 1, 2]) : move)),
  };
}

/** Swing for jazz and lofi: off-beat eighths land on the third triplet. */
function swung(tick: number, plan: MusicPlan): number {
  const swing = plan.genre === 'jazz' || plan.genre === 'lofi' || (plan.genre === 'hiphop' && plan.tempo < 95);
  return swing && tick % TICKS_PER_BEAT === EIGHTH ? tick + TICKS_PER_BEAT / 6 : tick;
}

/** The index-th note of a chord spread upwards: 0, 1, 2 are its tones, 3 the root an octave up, … */
function arpeggioPitch(base: number, tones: readonly number[], index: number): number {
  return base + tones[index % tones.length]! + 12 * Math.floor(index / tones.length);
}

export function composeSong(plan: MusicPlan, durationSeconds: number, seed: number): Song {
  const random = seededRandom(String(seed));
  const keyRoot = plan.keyRoot ?? random.below(12);
  const endTick = Math.round((durationSeconds * plan.tempo * TICKS_PER_BEAT) / 60);
  const bars = musicBars(durationSeconds, plan.tempo);
  const sections = formOf(bars);
  const sevenths = plan.genre === 'jazz' || plan.genre === 'lofi';
  const scale = SCALES[plan.mode];
  const pool: readonly (readonly number[])[] = PROGRESSIONS[plan.mode];

  const verseProgression = random.pick(pool);
  const chorusProgression = pool[(pool.indexOf(verseProgression) + 1 + random.below(pool.length - 1)) % pool.length]!;
  const bridgeProgression = plan.mode === 'major' ? [3, 4, 5, 4] : [5, 6, 3, 4];
  const progressionOf: Record<SectionName, readonly number[]> = {
    intro: verseProgression,
    verse: verseProgression,
    chorus: chorusProgression,
    bridge: bridgeProgression,
    ending: [0],
  };

  // One chord per bar; the last two bars before the final chord are the cadence (IV–V or iv–V).
  const chords: Chord[] = [];
  for (const section of sections) {
    for (let bar = 0; bar < section.bars; bar += 1) {
      chords.push(chordOf(progressionOf[section.name][bar % 4]!, plan, sevenths)); // progressions are four chords
    }
  }
  if (bars >= 2) {
    chords[bars - 2] = chordOf(random.chance(0.5) ? 3 : 1, plan, sevenths);
  }
  if (bars >= 1) {
    chords[bars - 1] = chordOf(4, plan, sevenths, true);
  }
  const tonic = chordOf(0, plan, false);

  const melody: Note[] = [];
  const harmony: Note[] = [];
  const bass: Note[] = [];
  const drums: Note[] = [];

  const motifs: Record<SectionName, Motif> = {
    intro: makeMotif(plan, random),
    verse: makeMotif(plan, random),
    chorus: makeMotif(plan, random),
    bridge: makeMotif(plan, random),
    ending: makeMotif(plan, random),
  };
  const seen: Partial<Record<SectionName, number>> = {};

  // The melody walks a scale index (0 = the tonic of octave 5 for a lead, 7 = an octave up).
  const melodyBase = plan.lead === 'flute' ? 72 : plan.lead === 'electric-guitar' || plan.lead === 'guitar' ? 60 : 64;
  const scaleMidi = (index: number) =>
    melodyBase - (melodyBase % 12) + keyRoot + scale[((index % 7) + 7) % 7]! + 12 * Math.floor(index / 7);
  // Chords sit between F#2 and F4 whatever the key.
  const chordBase = keyRoot >= 6 ? 36 : 48;
  let melodyIndex = 2;

  for (const section of sections) {
    const times = (seen[section.name] = (seen[section.name] ?? 0) + 1);
    let motif = motifs[section.name];
    if (times > 1) {
      motif = varyMotif(motif, random, 0.25);
    }
    const intensity = intensityOf(section.name);
    const loud =
      section.name === 'chorus' ? 1 : section.name === 'bridge' ? 0.9 : section.name === 'intro' ? 0.75 : 0.85;
    // The chorus sits higher; the bridge lower; the intro leaves the tune to the chords.
    const register = section.name === 'chorus' ? 5 : section.name === 'bridge' ? 1 : 2;
    melodyIndex = register;

    for (let bar = 0; bar < section.bars; bar += 1) {
      const absoluteBar = section.bar + bar;
      const barTick = absoluteBar * BAR;
      const chord = chords[absoluteBar]!; // one chord per bar of the sections
      const lastOfSection = bar === section.bars - 1;

      // Melody: chord tones on strong beats, steps between; the motif's rhythm repeats every two bars.
      if (!(section.name === 'intro' && bar < section.bars / 2)) {
        const rhythm = motif.rhythms[bar % 2]!; // a motif has two bars of rhythm
        let position = 0;
        rhythm.forEach((length, noteIndex) => {
          const eighths = Math.abs(length);
          const tick = barTick + position * EIGHTH;
          position += eighths;
          if (length < 0) {
            return;
          }
          const move = motif.moves[(noteIndex + (bar % 2) * 6) % motif.moves.length]!;
          let target = melodyIndex + move;
          const strong = (tick - barTick) % TICKS_PER_BEAT === 0;
          if (strong) {
            // Snap to the nearest chord tone of the bar's chord.
            const chordSteps = [0, 2, 4].map((step) => chord.degree + step);
            let best = target;
            let bestDistance = Infinity;
            for (let octave = -2; octave <= 3; octave += 1) {
              for (const step of chordSteps) {
                const candidate = step + 7 * octave;
                const distance = Math.abs(candidate - target);
                if (distance < bestDistance) {
                  best = candidate;
                  bestDistance = distance;
                }
              }
            }
            target = best;
          }
          // Keep the tune within an octave or so of its register, moving by octaves so a chord tone
          // stays a chord tone.
          while (target > register + 5) target -= 7;
          while (target < register - 3) target += 7;
          melodyIndex = target;
          const phraseEnd = lastOfSection && noteIndex === rhythm.length - 1;
          if (phraseEnd) {
            // A phrase comes to rest on the root of its chord.
            target = chord.degree + 7 * Math.round((target - chord.degree) / 7);
            melodyIndex = target;
          }
          const pitch = scaleMidi(target);
          const accentBoost = strong ? 8 : 0;
          melody.push({
            tick: swung(tick, plan),
            duration: Math.max(SIXTEENTH, eighths * EIGHTH - 30),
            pitch,
            velocity: Math.round(Math.min(120, (84 + accentBoost + random.below(10)) * loud)),
          });
        });
      }

      // Chords: held, comped or strummed by genre.
      const voicing = chord.tones.map((tone) => chordBase + keyRoot + tone);
      const chordVelocity = Math.round((plan.harmony === 'pad' || plan.harmony === 'strings' ? 70 : 76) * loud);
      const hold = (start: number, length: number, velocity: number, spread = 0) =>
        voicing.forEach((pitch, index) =>
          harmony.push({ tick: start + index * spread, duration: length - index * spread, pitch, velocity }),
        );
      if (
        plan.harmony === 'pad' ||
        plan.harmony === 'strings' ||
        plan.harmony === 'organ' ||
        section.name === 'intro'
      ) {
        hold(barTick, BAR - 20, chordVelocity);
      } else if (plan.harmony === 'guitar') {
        // Down-up strum: eighths, each stroke's strings a few ticks apart.
        for (let eighth = 0; eighth < 8; eighth += 1) {
          if (eighth === 3 || eighth === 5) continue;
          hold(
            swung(barTick + eighth * EIGHTH, plan),
            EIGHTH - 10,
            chordVelocity - (eighth % 2) * 14,
            eighth % 2 === 0 ? 12 : 8,
          );
        }
      } else if (plan.genre === 'jazz') {
        hold(barTick + TICKS_PER_BEAT + EIGHTH + TICKS_PER_BEAT / 6, EIGHTH + 60, chordVelocity);
        hold(barTick + 3 * TICKS_PER_BEAT, TICKS_PER_BEAT, chordVelocity - 8);
      } else if (plan.genre === 'rock' || plan.genre === 'edm') {
        for (let beat = 0; beat < 4; beat += 1)
          hold(barTick + beat * TICKS_PER_BEAT, TICKS_PER_BEAT - 40, chordVelocity - (beat % 2) * 10);
      } else if (
        plan.genre === 'classical' ||
        section.name === 'bridge' ||
        plan.mood === 'calm' ||
        plan.mood === 'sad'
      ) {
        // Arpeggio: up and down the chord in eighths.
        const order = [0, 1, 2, 3, 4, 3, 2, 1];
        order.forEach((index, eighth) =>
          harmony.push({
            tick: swung(barTick + eighth * EIGHTH, plan),
            duration: EIGHTH * 2,
            pitch: arpeggioPitch(chordBase + keyRoot, chord.tones.slice(0, 3), index),
            velocity: chordVelocity - 6,
          }),
        );
      } else {
        hold(barTick, 2 * TICKS_PER_BEAT - 20, chordVelocity);
        hold(barTick + 2 * TICKS_PER_BEAT, 2 * TICKS_PER_BEAT - 20, chordVelocity - 8);
      }

      // Bass: the root (and fifth) under the chord, its rhythm by genre.
      if (plan.bass && !(section.name === 'intro' && bar === 0 && section.bars > 2)) {
        const rootPitch = 36 + ((keyRoot + chord.tones[0]!) % 12);
        const low = rootPitch > 43 ? rootPitch - 12 : rootPitch;
        const fifth = low + 7;
        const velocity = Math.round(96 * loud);
        const add = (start: number, length: number, pitch: number, level = velocity) =>
          bass.push({ tick: swung(start, plan), duration: length, pitch, velocity: level });
        if (plan.genre === 'edm') {
          for (let beat = 0; beat < 4; beat += 1) add(barTick + beat * TICKS_PER_BEAT + EIGHTH, EIGHTH - 20, low);
        } else if (plan.genre === 'rock') {
          for (let eighth = 0; eighth < 8; eighth += 1)
            add(barTick + eighth * EIGHTH, EIGHTH - 20, low, velocity - (eighth % 2) * 10);
        } else if (plan.genre === 'jazz') {
          const next = chords[absoluteBar + 1] ?? tonic;
          const nextRoot = 36 + ((keyRoot + next.tones[0]!) % 12);
          const approach = (nextRoot > 43 ? nextRoot - 12 : nextRoot) + (random.chance(0.5) ? 1 : -1);
          [low, low + chord.tones[1]! - chord.tones[0]!, fifth, approach].forEach((pitch, beat) =>
            add(barTick + beat * TICKS_PER_BEAT, TICKS_PER_BEAT - 30, pitch),
          );
        } else if (plan.genre === 'lofi' || plan.genre === 'hiphop') {
          add(barTick, 3 * EIGHTH, low);
          add(barTick + 3 * EIGHTH + EIGHTH, EIGHTH, low);
          add(barTick + 5 * EIGHTH, 3 * EIGHTH - 20, random.chance(0.5) ? fifth : low);
        } else if (plan.genre === 'classical' || plan.genre === 'cinematic' || plan.genre === 'ambient') {
          add(barTick, BAR - 20, low);
        } else {
          add(barTick, 3 * EIGHTH, low);
          add(barTick + 3 * EIGHTH, EIGHTH, low, velocity - 14);
          add(barTick + 2 * TICKS_PER_BEAT, 2 * TICKS_PER_BEAT - 30, random.chance(0.6) ? fifth : low);
        }
      }

      if (plan.drums) {
        const hits = drumBar(
          plan.genre as Genre,
          intensity,
          {
            fill: lastOfSection && section.bars >= 4,
            crash: bar === 0 && section.name !== 'intro' && intensity === 'chorus',
          },
          random,
        );
        for (const hit of hits) {
          drums.push({
            tick: swung(barTick + hit.step * SIXTEENTH, plan),
            duration: SIXTEENTH,
            pitch: hit.key,
            velocity: Math.round(hit.velocity * (section.name === 'intro' ? 0.85 : 1)),
          });
        }
      }
    }
  }

  // The final chord: the tonic, held by everyone to the very end (the render fades it out).
  const finalTick = bars * BAR;
  const ringFor = Math.max(TICKS_PER_BEAT / 2, endTick - finalTick);
  const finalVoicing = tonic.tones.map((tone) => chordBase + keyRoot + tone);
  finalVoicing.forEach((pitch) => harmony.push({ tick: finalTick, duration: ringFor, pitch, velocity: 78 }));
  melody.push({
    tick: finalTick,
    duration: ringFor,
    pitch: scaleMidi(Math.max(0, Math.round(melodyIndex / 7)) * 7),
    velocity: 82,
  });
  if (plan.bass) {
    const root = 36 + (keyRoot % 12);
    bass.push({ tick: finalTick, duration: ringFor, pitch: root > 43 ? root - 12 : root, velocity: 92 });
  }
  if (plan.drums && bars > 0) {
    drums.push(
      { tick: finalTick, duration: SIXTEENTH, pitch: DRUM.kick, velocity: 100 },
      {
        tick: finalTick,
        duration: SIXTEENTH,
        pitch: plan.genre === 'ambient' ? DRUM.shaker : DRUM.crash,
        velocity: 96,
      },
    );
  }
  sections.push({ name: 'ending', bar: bars, bars: 1 });

  const reverb =
    plan.genre === 'ambient' || plan.genre === 'cinematic' || plan.genre === 'classical'
      ? 96
      : plan.genre === 'rock' || plan.genre === 'edm'
        ? 40
        : 64;
  const clip = (notes: Note[]) =>
    notes
      .filter((note) => note.tick < endTick)
      .map((note) => ({ ...note, duration: Math.min(note.duration, endTick - note.tick) }))
      .sort((a, b) => a.tick - b.tick || a.pitch - b.pitch);
  const parts: Part[] = [
    { name: 'melody', channel: 0, program: GM_PROGRAM[plan.lead], volume: 104, pan: 64, reverb, notes: clip(melody) },
    {
      name: 'chords',
      channel: 1,
      program: GM_PROGRAM[plan.harmony],
      volume: plan.harmony === plan.lead ? 78 : 84,
      pan: 44,
      reverb,
      notes: clip(harmony),
    },
  ];
  if (plan.bass) {
    parts.push({
      name: 'bass',
      channel: 2,
      program: bassProgram(plan.genre),
      volume: 100,
      pan: 64,
      reverb: 24,
      notes: clip(bass),
    });
  }
  if (plan.drums) {
    parts.push({ name: 'drums', channel: 9, program: 0, volume: 96, pan: 64, reverb: 40, notes: clip(drums) });
  }
  return { tempo: plan.tempo, keyRoot, sections, endTick, parts };
}

function bassProgram(genre: Genre): number {
  switch (genre) {
    case 'jazz':
    case 'folk':
      return 32; // acoustic bass
    case 'rock':
      return 34; // picked
    case 'edm':
      return 38; // synth bass
    case 'classical':
    case 'cinematic':
      return 43; // contrabass
    case 'ambient':
      return 89; // a warm pad an octave down
    default:
      return 33; // fingered
  }
}
