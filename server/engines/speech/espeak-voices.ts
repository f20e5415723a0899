/**
 * What `@echogarden/espeak-ng-emscripten@0.3.5` speaks, listed here so a voice or language can be checked
 * without starting the eSpeak process (`list_voices()` of that build: language names, lower-cased, and the
 * voice variants in its `voices/!v` directory). eSpeak itself accepts an unknown variant silently, so the
 * variants are checked here.
 */
export const ESPEAK_LANGUAGES: ReadonlySet<string> = new Set(
  (
    'af am an ar as az ba be bg bn bpy bs ca ca-ba ca-nw ca-va chr-us-qaaa-x-west cmn zh-cmn zh cmn-latn-pinyin cs cv cy da de el ' +
    'en-029 en en-gb en-gb-scotland en-gb-x-gbclan en-gb-x-gbcwmd en-gb-x-rp en-us en-us-nyc eo es es-419 es-mx et eu fa fa-latn ' +
    'fi fo fr-be fr fr-ch fr-fr ga gd gn grc gu hak haw he hi hr hbs ht hu hy hy-arevela hyw hy-arevmda ia id io is it ja jbo ka ' +
    'kaa kk kl kn ko kok ku ky la lb lfn lt ltg lv mi mk ml mr ms mt mto my nb no nci ne nl nog om or pa pap piqd pl pt pt-pt ' +
    'pt-br py qdb qu quc qya ro ru ru-cl ru-lv sd shn si sjn sk sl smj sq sr sv sw ta te th ti tk tn tr tt ug uk ur uz vi ' +
    'vi-vn-x-central vi-vn-x-south xex yue zh-yue'
  ).split(' '),
);

export const ESPEAK_VARIANTS: ReadonlySet<string> = new Set(
  (
    'alex alicia andrea andy annie anxiousandy demonic denis diogo gene gene2 henrique hugo jacky lee marco mario michael mike mr ' +
    'nguyen reed ricishaymax ricishaymax2 ricishaymax3 storm tweaky unirobot adam anika anikarobot announcer antonio aunty belinda ' +
    'benjamin boris caleb croak david ed edward edward2 f1 f2 f3 f4 f5 fast grandma grandpa gustave ian iven iven2 iven3 iven4 john ' +
    'kaukovalta klatt klatt2 klatt3 klatt4 klatt5 klatt6 linda m1 m2 m3 m4 m5 m6 m7 m8 marcelo max michel miguel mike2 norbert ' +
    'pablo paul pedro quincy rob robert robosoft robosoft2 robosoft3 robosoft4 robosoft5 robosoft6 robosoft7 robosoft8 sandro ' +
    'shelby steph steph2 steph3 travis victor whisper whisperf zac'
  ).split(' '),
);

/** The eSpeak language for a BCP 47 tag: the whole tag if eSpeak has it (`pt-br`), else its primary subtag. */
export function espeakLanguageFor(tag: string): string | undefined {
  const lower = tag.toLowerCase();
  if (ESPEAK_LANGUAGES.has(lower)) {
    return lower;
  }
  const primary = lower.split('-')[0]!; // split returns at least one part
  return ESPEAK_LANGUAGES.has(primary) ? primary : undefined;
}
