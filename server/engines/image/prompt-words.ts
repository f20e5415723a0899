/**
 * Reads an image prompt as a handful of scene choices: the sky (time of day or setting), the kinds of land,
 * the objects worth drawing and the colours named. A crude stemmer and a synonym table do the work, so
 * "snowy dunes at dusk" reads as snow + desert under a sunset. Subjects we cannot draw (a fox, a person) are
 * simply not found; the scene still shows where and when they are.
 */

export const SKY_THEMES = ['day', 'dawn', 'sunset', 'storm', 'night', 'fire', 'space'] as const;
export type SkyTheme = (typeof SKY_THEMES)[number];

export const LAND_THEMES = ['ocean', 'beach', 'forest', 'mountain', 'snow', 'desert', 'city', 'field'] as const;
export type LandTheme = (typeof LAND_THEMES)[number];

export const SCENE_OBJECTS = [
  'sun',
  'moon',
  'stars',
  'clouds',
  'rain',
  'snowfall',
  'lightning',
  'trees',
  'buildings',
  'boats',
  'birds',
  'flowers',
  'planet',
  'flames',
] as const;
export type SceneObject = (typeof SCENE_OBJECTS)[number];

export interface PromptReading {
  sky: SkyTheme;
  /** Every land theme named, in the order of `LAND_THEMES` (the scene layers them). */
  land: LandTheme[];
  objects: Set<SceneObject>;
  /** Hex colours of the colour words, in prompt order, without repeats. */
  accents: string[];
}

interface WordMeaning {
  sky?: SkyTheme;
  land?: LandTheme;
  objects?: SceneObject[];
  colour?: string;
}

/** When two sky words meet ("stormy night"), the stronger setting wins; the other still adds its objects. */
const SKY_PRIORITY: Record<SkyTheme, number> = { day: 0, dawn: 1, sunset: 2, storm: 3, night: 4, fire: 5, space: 6 };

const COLOURS: Record<string, string> = {
  red: '#e0323c',
  crimson: '#b3122e',
  scarlet: '#ff2b1c',
  orange: '#ff8a1f',
  amber: '#ffb319',
  yellow: '#ffe03a',
  gold: '#f2b51d',
  golden: '#f2b51d',
  green: '#33b54a',
  emerald: '#14a06a',
  lime: '#a6e22e',
  teal: '#119c9c',
  turquoise: '#2fd4c4',
  cyan: '#1fd2f0',
  blue: '#2a6ff0',
  azure: '#3a9bff',
  navy: '#1b2a6b',
  indigo: '#4b2fb0',
  purple: '#9b3fd6',
  violet: '#8a4ff0',
  magenta: '#e62ec8',
  pink: '#ff6fb0',
  rose: '#f2557a',
  white: '#f6f6f6',
  black: '#141414',
  grey: '#8a8f98',
  gray: '#8a8f98',
  silver: '#c4cad3',
  brown: '#8a5a32',
};

const MEANINGS: Record<string, WordMeaning> = {
  day: { sky: 'day', objects: ['sun'] },
  daylight: { sky: 'day', objects: ['sun'] },
  noon: { sky: 'day', objects: ['sun'] },
  afternoon: { sky: 'day', objects: ['sun'] },
  sun: { objects: ['sun'] },
  sunshine: { sky: 'day', objects: ['sun'] },
  summer: { sky: 'day', objects: ['sun'] },
  bright: { sky: 'day' },
  clear: { sky: 'day' },
  blue: { colour: COLOURS.blue, sky: 'day' },
  dawn: { sky: 'dawn', objects: ['sun'] },
  sunrise: { sky: 'dawn', objects: ['sun'] },
  morning: { sky: 'dawn', objects: ['sun'] },
  daybreak: { sky: 'dawn', objects: ['sun'] },
  sunset: { sky: 'sunset', objects: ['sun'] },
  dusk: { sky: 'sunset', objects: ['sun'] },
  evening: { sky: 'sunset', objects: ['sun'] },
  twilight: { sky: 'sunset', objects: ['sun'] },
  sundown: { sky: 'sunset', objects: ['sun'] },
  autumn: { sky: 'sunset', land: 'forest' },
  storm: { sky: 'storm', objects: ['clouds', 'rain', 'lightning'] },
  thunder: { sky: 'storm', objects: ['clouds', 'lightning'] },
  thunderstorm: { sky: 'storm', objects: ['clouds', 'rain', 'lightning'] },
  lightning: { sky: 'storm', objects: ['clouds', 'lightning'] },
  rain: { sky: 'storm', objects: ['clouds', 'rain'] },
  drizzle: { sky: 'storm', objects: ['clouds', 'rain'] },
  overcast: { sky: 'storm', objects: ['clouds'] },
  gloom: { sky: 'storm', objects: ['clouds'] },
  fog: { sky: 'storm', objects: ['clouds'] },
  mist: { sky: 'storm', objects: ['clouds'] },
  cloud: { objects: ['clouds'] },
  sky: { objects: ['clouds'] },
  night: { sky: 'night', objects: ['moon', 'stars'] },
  midnight: { sky: 'night', objects: ['moon', 'stars'] },
  nighttime: { sky: 'night', objects: ['moon', 'stars'] },
  dark: { sky: 'night', objects: ['stars'] },
  moon: { sky: 'night', objects: ['moon', 'stars'] },
  moonlight: { sky: 'night', objects: ['moon', 'stars'] },
  moonlit: { sky: 'night', objects: ['moon', 'stars'] },
  star: { objects: ['stars'] },
  starry: { sky: 'night', objects: ['stars'] },
  neon: { sky: 'night', land: 'city' },
  cyberpunk: { sky: 'night', land: 'city', colour: COLOURS.magenta },
  space: { sky: 'space', objects: ['stars'] },
  galaxy: { sky: 'space', objects: ['stars'] },
  cosmos: { sky: 'space', objects: ['stars'] },
  cosmic: { sky: 'space', objects: ['stars'] },
  universe: { sky: 'space', objects: ['stars'] },
  nebula: { sky: 'space', objects: ['stars'] },
  planet: { sky: 'space', objects: ['planet', 'stars'] },
  astronaut: { sky: 'space', objects: ['planet', 'stars'] },
  orbit: { sky: 'space', objects: ['planet', 'stars'] },
  saturn: { sky: 'space', objects: ['planet', 'stars'] },
  fire: { sky: 'fire', objects: ['flames'] },
  flame: { sky: 'fire', objects: ['flames'] },
  blaze: { sky: 'fire', objects: ['flames'] },
  burn: { sky: 'fire', objects: ['flames'] },
  inferno: { sky: 'fire', objects: ['flames'] },
  lava: { sky: 'fire', objects: ['flames'], land: 'mountain' },
  volcano: { sky: 'fire', objects: ['flames'], land: 'mountain' },
  dragon: { sky: 'fire', objects: ['flames'] },
  ocean: { land: 'ocean' },
  sea: { land: 'ocean' },
  seascape: { land: 'ocean' },
  wave: { land: 'ocean' },
  water: { land: 'ocean' },
  lake: { land: 'ocean' },
  river: { land: 'ocean' },
  harbor: { land: 'ocean', objects: ['boats'] },
  harbour: { land: 'ocean', objects: ['boats'] },
  boat: { land: 'ocean', objects: ['boats'] },
  ship: { land: 'ocean', objects: ['boats'] },
  sail: { land: 'ocean', objects: ['boats'] },
  sailboat: { land: 'ocean', objects: ['boats'] },
  yacht: { land: 'ocean', objects: ['boats'] },
  beach: { land: 'beach' },
  shore: { land: 'beach' },
  coast: { land: 'beach' },
  sand: { land: 'beach' },
  island: { land: 'beach' },
  tropical: { land: 'beach', sky: 'day' },
  palm: { land: 'beach' },
  forest: { land: 'forest', objects: ['trees'] },
  wood: { land: 'forest', objects: ['trees'] },
  jungle: { land: 'forest', objects: ['trees'] },
  tree: { objects: ['trees'] },
  pine: { land: 'forest', objects: ['trees'] },
  mountain: { land: 'mountain' },
  peak: { land: 'mountain' },
  alp: { land: 'mountain' },
  hill: { land: 'field' },
  valley: { land: 'mountain' },
  cliff: { land: 'mountain' },
  snow: { land: 'snow', objects: ['snowfall'] },
  winter: { land: 'snow', objects: ['snowfall'] },
  ice: { land: 'snow' },
  icy: { land: 'snow' },
  frozen: { land: 'snow' },
  arctic: { land: 'snow' },
  glacier: { land: 'snow' },
  christmas: { land: 'snow', objects: ['snowfall', 'trees'] },
  desert: { land: 'desert' },
  dune: { land: 'desert' },
  sahara: { land: 'desert' },
  cactus: { land: 'desert' },
  city: { land: 'city', objects: ['buildings'] },
  skyline: { land: 'city', objects: ['buildings'] },
  town: { land: 'city', objects: ['buildings'] },
  street: { land: 'city', objects: ['buildings'] },
  building: { land: 'city', objects: ['buildings'] },
  skyscraper: { land: 'city', objects: ['buildings'] },
  urban: { land: 'city', objects: ['buildings'] },
  downtown: { land: 'city', objects: ['buildings'] },
  metropolis: { land: 'city', objects: ['buildings'] },
  field: { land: 'field' },
  meadow: { land: 'field' },
  grass: { land: 'field' },
  farm: { land: 'field' },
  prairie: { land: 'field' },
  countryside: { land: 'field' },
  garden: { land: 'field', objects: ['flowers'] },
  flower: { land: 'field', objects: ['flowers'] },
  blossom: { land: 'field', objects: ['flowers'] },
  tulip: { land: 'field', objects: ['flowers'] },
  rose: { land: 'field', objects: ['flowers'], colour: COLOURS.rose },
  spring: { land: 'field', objects: ['flowers'], sky: 'day' },
  bird: { objects: ['birds'] },
  seagull: { objects: ['birds'], land: 'ocean' },
  gull: { objects: ['birds'], land: 'ocean' },
  eagle: { objects: ['birds'] },
  flock: { objects: ['birds'] },
  crow: { objects: ['birds'] },
};

/** Candidate roots of a word, most literal first: "snowy" → snowy, snow; "sunny" → sunny, sunn, sun. */
function rootsOf(word: string): string[] {
  const roots = [word];
  const add = (root: string) => {
    if (root.length >= 3 && !roots.includes(root)) {
      roots.push(root);
      // A doubled final consonant left by a suffix: "sunn" → "sun", "foggi" is handled by the y rule.
      if (/([^aeiou])\1$/.test(root)) {
        roots.push(root.slice(0, -1));
      }
    }
  };
  for (const suffix of ['ies', 'es', 's', 'y', 'ing', 'ed', 'er', 'ly']) {
    if (word.endsWith(suffix)) {
      add(word.slice(0, -suffix.length));
    }
  }
  if (word.endsWith('ies')) {
    add(`${word.slice(0, -3)}y`);
  }
  return roots;
}

function meaningOf(word: string): { meaning?: WordMeaning; colour?: string } {
  for (const root of rootsOf(word)) {
    const meaning = Object.hasOwn(MEANINGS, root) ? MEANINGS[root] : undefined;
    const colour = Object.hasOwn(COLOURS, root) ? COLOURS[root] : undefined;
    if (meaning || colour) {
      return { meaning, colour: meaning?.colour ?? colour };
    }
  }
  return {};
}

/** Only the start of a very long prompt is read: the scene has a few dozen choices, not thousands. */
const MAX_PROMPT_CHARS = 4_000;

export function readPrompt(prompt: string): PromptReading {
  const words =
    prompt
      .slice(0, MAX_PROMPT_CHARS)
      .toLowerCase()
      .match(/[a-z]+/g) ?? [];
  let sky: SkyTheme | undefined;
  const land = new Set<LandTheme>();
  const objects = new Set<SceneObject>();
  const accents: string[] = [];
  for (const word of words) {
    const { meaning, colour } = meaningOf(word);
    if (colour && !accents.includes(colour)) {
      accents.push(colour);
    }
    if (!meaning) {
      continue;
    }
    if (meaning.sky && (sky === undefined || SKY_PRIORITY[meaning.sky] > SKY_PRIORITY[sky])) {
      sky = meaning.sky;
    }
    if (meaning.land) {
      land.add(meaning.land);
    }
    for (const object of meaning.objects ?? []) {
      objects.add(object);
    }
  }
  const chosenSky = sky ?? 'day';
  // Each setting brings its own light: a day has a sun, a night a moon and stars, unless the words chose otherwise.
  if (chosenSky === 'day' || chosenSky === 'dawn' || chosenSky === 'sunset') {
    objects.add('sun');
    objects.delete('moon');
  } else if (chosenSky === 'night') {
    objects.add('moon');
    objects.add('stars');
    objects.delete('sun');
  } else if (chosenSky === 'space') {
    objects.add('stars');
    objects.delete('sun');
    objects.delete('clouds');
  } else if (chosenSky === 'storm') {
    objects.add('clouds');
    objects.delete('sun');
  } else if (chosenSky === 'fire') {
    objects.add('flames');
    objects.delete('sun');
  }
  if (land.has('city')) {
    objects.add('buildings');
  }
  if (land.has('forest')) {
    objects.add('trees');
  }
  // Space with no ground named stays in space; anywhere else, an unnamed place is open country.
  if (land.size === 0 && chosenSky !== 'space') {
    land.add('field');
  }
  return {
    sky: chosenSky,
    land: LAND_THEMES.filter((theme) => land.has(theme)),
    objects,
    accents: accents.slice(0, 6),
  };
}
