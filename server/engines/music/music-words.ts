/**
 * Prompt (and lyrics) words → a musical plan: genre, mood, tempo, mode, key and the General MIDI band. The
 * prompt decides; the lyrics only tip the mood, since the built-in engine has no voice to sing them.
 * Everything left open here (the key when none is named, the progression, the melody) the seed decides later.
 */

export const GENRES = [
  'pop',
  'rock',
  'jazz',
  'edm',
  'lofi',
  'folk',
  'classical',
  'ambient',
  'hiphop',
  'cinematic',
] as const;
export type Genre = (typeof GENRES)[number];

export type Mood = 'happy' | 'sad' | 'calm' | 'energetic' | 'dark' | 'epic' | 'neutral';
export type Mode = 'major' | 'minor';

export const INSTRUMENTS = [
  'piano',
  'electric-piano',
  'guitar',
  'electric-guitar',
  'strings',
  'synth',
  'pad',
  'brass',
  'flute',
  'organ',
] as const;
export type Instrument = (typeof INSTRUMENTS)[number];

/** General MIDI program (0-based) of each melodic instrument. */
export const GM_PROGRAM: Record<Instrument, number> = {
  piano: 0,
  'electric-piano': 4,
  guitar: 25,
  'electric-guitar': 29,
  strings: 48,
  synth: 81,
  pad: 89,
  brass: 61,
  flute: 73,
  organ: 16,
};

export interface MusicPlan {
  genre: Genre;
  mood: Mood;
  /** Beats per minute. */
  tempo: number;
  mode: Mode;
  /** Pitch class of the tonic (0 = C), when the prompt named a key; otherwise the seed picks it. */
  keyRoot?: number;
  /** The melody's instrument. */
  lead: Instrument;
  /** The instrument holding the chords. */
  harmony: Instrument;
  bass: boolean;
  drums: boolean;
}

interface GenreTraits {
  words: RegExp;
  tempo: number;
  lead: Instrument;
  harmony: Instrument;
  drums: boolean;
}

/**
 * What each genre brings when the prompt names no instruments or tempo. Ambient's tune is a sparse piano over
 * the pad: a slow-attack pad cannot carry a melody.
 */
const GENRE_TRAITS: Record<Genre, GenreTraits> = {
  lofi: {
    words: /\b(lo-?fi|chillhop|study beats?)\b/,
    tempo: 80,
    lead: 'electric-piano',
    harmony: 'electric-piano',
    drums: true,
  },
  edm: {
    words: /\b(edm|house|techno|trance|dance|club|electronic|synthwave|dubstep|rave)\b/,
    tempo: 128,
    lead: 'synth',
    harmony: 'pad',
    drums: true,
  },
  hiphop: {
    words: /\b(hip-?hop|rap|trap|boom-?bap)\b/,
    tempo: 90,
    lead: 'electric-piano',
    harmony: 'pad',
    drums: true,
  },
  rock: {
    words: /\b(rock|punk|metal|grunge|garage)\b/,
    tempo: 124,
    lead: 'electric-guitar',
    harmony: 'electric-guitar',
    drums: true,
  },
  jazz: {
    words: /\b(jazz|swing|bebop|bossa|blues|lounge)\b/,
    tempo: 112,
    lead: 'piano',
    harmony: 'piano',
    drums: true,
  },
  folk: {
    words: /\b(folk|country|acoustic|bluegrass|campfire)\b/,
    tempo: 100,
    lead: 'guitar',
    harmony: 'guitar',
    drums: true,
  },
  classical: {
    words: /\b(classical|baroque|orchestral|orchestra|symphon\w*|sonata|chamber|waltz|nocturne)\b/,
    tempo: 92,
    lead: 'strings',
    harmony: 'strings',
    drums: false,
  },
  cinematic: {
    words: /\b(cinematic|film score|soundtrack|trailer|epic)\b/,
    tempo: 96,
    lead: 'strings',
    harmony: 'strings',
    drums: true,
  },
  ambient: {
    words: /\b(ambient|drone|meditat\w*|atmospheric|new age|spa)\b/,
    tempo: 68,
    lead: 'piano',
    harmony: 'pad',
    drums: false,
  },
  pop: { words: /\bpop\b/, tempo: 108, lead: 'piano', harmony: 'strings', drums: true },
};

/** In order of precedence: the first genre whose words appear wins ("ambient lofi" is lofi). */
const GENRE_ORDER: Genre[] = [
  'lofi',
  'edm',
  'hiphop',
  'rock',
  'jazz',
  'folk',
  'classical',
  'cinematic',
  'ambient',
  'pop',
];

const MOOD_WORDS: [Mood, RegExp][] = [
  ['dark', /\b(dark|sinister|ominous|horror|creepy|eerie|menacing|haunted)\b/],
  [
    'sad',
    /\b(sad|melanchol\w*|sorrow\w*|grief|lonely|loneliness|heartbr\w*|tears?|cry\w*|mourn\w*|blue|longing|goodbye|lost)\b/,
  ],
  ['epic', /\b(epic|heroic|triumph\w*|majestic|battle|grand|anthem\w*)\b/],
  ['energetic', /\b(energetic|upbeat|fast|driving|intense|powerful|hype|party|exciting|aggressive)\b/],
  ['calm', /\b(calm|relax\w*|peaceful|gentle|soft|chill|mellow|quiet|sleep\w*|soothing|serene|dreamy|slow)\b/],
  ['happy', /\b(happy|joy\w*|bright|cheerful|hopeful|sunny|uplifting|playful|fun|love|smile|summer)\b/],
];

const INSTRUMENT_WORDS: [Instrument, RegExp][] = [
  ['electric-piano', /\b(electric piano|e-?piano|rhodes|wurlitzer|keys)\b/],
  ['piano', /\bpiano\b/],
  ['electric-guitar', /\b(electric guitar|distorted guitar|guitar riffs?|power chords?)\b/],
  ['guitar', /\bguitars?\b/],
  ['strings', /\b(strings|violins?|cellos?|viola|string quartet)\b/],
  ['synth', /\b(synths?|synthesi[sz]ers?|808s?|arp\w*)\b/],
  ['pad', /\bpads?\b/],
  ['brass', /\b(brass|trumpets?|horns?|trombones?|sax\w*)\b/],
  ['flute', /\b(flutes?|woodwinds?|recorder|pan ?pipes?)\b/],
  ['organ', /\b(organ|hammond)\b/],
];

const NOTE_NAMES: Record<string, number> = { c: 0, d: 2, e: 4, f: 5, g: 7, a: 9, b: 11 };

/** "128 BPM", "at 90 bpm", "tempo 140": an explicit tempo, clamped to what the composer can play. */
function explicitTempo(text: string): number | undefined {
  const match =
    /\b(\d{2,3}(?:\.\d+)?)\s*(?:bpm|beats per minute)\b/.exec(text) ?? /\btempo\s*(?:of\s*)?(\d{2,3})\b/.exec(text);
  return match ? Math.min(200, Math.max(40, Math.round(Number(match[1])))) : undefined;
}

/** "in D minor", "key of F#", "Bb major": the tonic, and the mode when it is named. */
function explicitKey(text: string): { root: number; mode?: Mode } | undefined {
  const match =
    /\b([a-g])\s*(#|♯|b|♭|-?sharp|-?flat)?\s+(major|minor|maj|min)\b/.exec(text) ??
    /\bkey of ([a-g])\s*(#|♯|b|♭|-?sharp|-?flat)?(?:\s+(major|minor))?/.exec(text);
  if (!match) {
    return undefined;
  }
  const accidental = match[2] ?? '';
  const shift = /#|♯|sharp/.test(accidental) ? 1 : /b|♭|flat/.test(accidental) ? -1 : 0;
  const root = (NOTE_NAMES[match[1]!]! + shift + 12) % 12; // group 1 is mandatory, a note NOTE_NAMES has
  const mode = match[3] ? (match[3].startsWith('maj') ? 'major' : 'minor') : undefined;
  return { root, mode };
}

function moodOf(text: string): Mood | undefined {
  return MOOD_WORDS.find(([, words]) => words.test(text))?.[0];
}

export function planFromWords(prompt: string, lyrics?: string): MusicPlan {
  const text = prompt.toLowerCase();
  const genre = GENRE_ORDER.find((name) => GENRE_TRAITS[name].words.test(text)) ?? 'pop';
  const traits = GENRE_TRAITS[genre];
  // The prompt's mood wins; lyrics only speak when the prompt says nothing about mood.
  const mood =
    moodOf(text) ?? (lyrics ? moodOf(lyrics.toLowerCase()) : undefined) ?? (genre === 'cinematic' ? 'epic' : 'neutral');

  let tempo = explicitTempo(text);
  if (tempo === undefined) {
    const moodFactor = mood === 'energetic' ? 1.18 : mood === 'calm' || mood === 'sad' ? 0.82 : 1;
    const wordFactor = /\b(slow|slowly|ballad|lullaby)\b/.test(text)
      ? 0.85
      : /\b(fast|quick|rapid)\b/.test(text)
        ? 1.15
        : 1;
    tempo = Math.round(Math.min(176, Math.max(52, traits.tempo * moodFactor * wordFactor)));
  }

  const key = explicitKey(text);
  const minorWords = /\b(minor)\b/.test(text);
  const mode: Mode = key?.mode ?? (minorWords || mood === 'sad' || mood === 'dark' ? 'minor' : 'major');

  const named = INSTRUMENT_WORDS.filter(([, words]) => words.test(text)).map(([instrument]) => instrument);
  // "electric guitar" also says "guitar"; keep the more precise one.
  const instruments = named.filter(
    (instrument) =>
      !(instrument === 'guitar' && named.includes('electric-guitar')) &&
      !(instrument === 'piano' && named.includes('electric-piano')),
  );
  const lead = instruments[0] ?? traits.lead;
  const harmony = instruments[1] ?? traits.harmony;

  // "solo piano" is one instrument alone; "a guitar solo" is a band with a solo in it.
  const solo =
    /\bsolo (piano|guitar|violin|cello|flute|organ|harp|strings)\b|\bunaccompanied\b|\b(piano|guitar) only\b/.test(
      text,
    );
  const noDrums = /\b(no drums|without drums|drumless|no percussion|a cappella)\b/.test(text);
  const wantsDrums = /\b(drums?|beats?|percussion|groove)\b/.test(text) && !noDrums;
  // A calm pop prompt ("gentle piano and strings") reads as a ballad without a kit unless it asks for one.
  const drums = !solo && !noDrums && (wantsDrums || (traits.drums && !(mood === 'calm' && genre === 'pop')));
  const bass = !solo && (drums || genre === 'classical' || genre === 'cinematic' || /\bbass\b/.test(text));

  return { genre, mood, tempo, mode, keyRoot: key?.root, lead, harmony: solo ? lead : harmony, bass, drums };
}
