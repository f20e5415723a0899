/**
 * Which engine speaks a request, with which of its voices. OpenAI's voice names map onto Flite voices (with a
 * small pitch offset, so voices sharing a Flite voice still differ) and onto an eSpeak variant for languages
 * Flite cannot speak. Flite voices are English only. eSpeak voices (`fr`, `en-us+f3`) always use eSpeak.
 *
 * `language`: `auto` takes the language from the voice; English (`en`, `en-US`, …) goes to Flite for Flite
 * and OpenAI voices; any other language goes to eSpeak NG, which is optional (GPL-3.0, own process).
 */
import { ApiError } from '../../core/api-error.js';
import { ESPEAK_LANGUAGES, ESPEAK_VARIANTS, espeakLanguageFor } from './espeak-voices.js';
import { isFliteVoice, type FliteVoice } from './flite.js';

interface MappedVoice {
  flite: FliteVoice;
  /** Semitones added to the caller's pitch. */
  pitchOffset: number;
  espeakVariant: string;
}

export const OPENAI_VOICES: Readonly<Record<string, MappedVoice>> = {
  alloy: { flite: 'slt', pitchOffset: 0, espeakVariant: 'f3' },
  ash: { flite: 'rms', pitchOffset: 0, espeakVariant: 'm3' },
  ballad: { flite: 'awb', pitchOffset: 0, espeakVariant: 'm2' },
  coral: { flite: 'slt', pitchOffset: -1, espeakVariant: 'f2' },
  echo: { flite: 'kal16', pitchOffset: 0, espeakVariant: 'm1' },
  fable: { flite: 'awb', pitchOffset: 1, espeakVariant: 'm4' },
  nova: { flite: 'slt', pitchOffset: 2, espeakVariant: 'f4' },
  onyx: { flite: 'rms', pitchOffset: -2, espeakVariant: 'm6' },
  sage: { flite: 'kal16', pitchOffset: 2, espeakVariant: 'm5' },
  shimmer: { flite: 'slt', pitchOffset: 3, espeakVariant: 'f5' },
  verse: { flite: 'awb', pitchOffset: -1, espeakVariant: 'm7' },
  marin: { flite: 'slt', pitchOffset: -2, espeakVariant: 'f1' },
  cedar: { flite: 'rms', pitchOffset: 1, espeakVariant: 'm8' },
};

/** The variant eSpeak uses for a Flite voice asked to speak another language. */
const FLITE_ESPEAK_VARIANT: Record<FliteVoice, string> = { slt: 'f3', rms: 'm3', awb: 'm2', kal16: 'm1' };

export type VoicePlan =
  | { engine: 'flite'; voice: FliteVoice; pitchOffset: number }
  /** `voice` is eSpeak's voice string: a language, optionally `+variant` (`fr+f3`). */
  | { engine: 'espeak'; voice: string; pitchOffset: number };

export interface VoiceOptions {
  /** Whether the optional eSpeak NG package is installed. */
  espeak: boolean;
}

const isEnglish = (language: string) => /^en(-|$)/i.test(language);

export function planVoice(voice: string, language: string, options: VoiceOptions): VoicePlan {
  const name = voice.toLowerCase();
  const mapped = Object.hasOwn(OPENAI_VOICES, name) ? OPENAI_VOICES[name] : undefined;
  const flite = mapped?.flite ?? (isFliteVoice(name) ? name : undefined);
  if (flite) {
    if (language === 'auto' || isEnglish(language)) {
      return { engine: 'flite', voice: flite, pitchOffset: mapped?.pitchOffset ?? 0 };
    }
    return {
      engine: 'espeak',
      voice: `${espeakLanguage(language, options)}+${mapped?.espeakVariant ?? FLITE_ESPEAK_VARIANT[flite]}`,
      pitchOffset: 0,
    };
  }
  const [base = '', variant, ...extra] = name.split('+'); // split returns at least one part
  if (ESPEAK_LANGUAGES.has(base) && extra.length === 0 && (variant === undefined || ESPEAK_VARIANTS.has(variant))) {
    const spoken = language === 'auto' ? requireEspeak(base, options, 'voice') : espeakLanguage(language, options);
    return { engine: 'espeak', voice: variant ? `${spoken}+${variant}` : spoken, pitchOffset: 0 };
  }
  throw new ApiError(
    400,
    `Unknown voice '${voice}'. Voices: ${Object.keys(OPENAI_VOICES).join(', ')}; Flite: slt, rms, awb, kal16; eSpeak NG: a language such as en-us, fr or de, optionally with a variant (en-us+f3).`,
    {
      param: 'voice',
      code: 'unknown_voice',
    },
  );
}

function espeakLanguage(tag: string, options: VoiceOptions): string {
  const language = espeakLanguageFor(tag);
  if (!language) {
    throw new ApiError(
      400,
      `No built-in engine speaks '${tag}'. English is spoken by Flite; eSpeak NG speaks about 140 languages (af, ar, cmn, de, es, fr, hi, it, ja, pt-br, ru, …).`,
      {
        param: 'language',
        code: 'unsupported_language',
      },
    );
  }
  return requireEspeak(language, options, 'language');
}

function requireEspeak(language: string, options: VoiceOptions, param: 'voice' | 'language'): string {
  if (!options.espeak) {
    throw new ApiError(
      400,
      `'${language}' needs eSpeak NG, which is not installed: only English (Flite voices slt, rms, awb, kal16 and the OpenAI voice names) is available. Install the optional dependency @echogarden/espeak-ng-emscripten (GPL-3.0, run in its own process) to speak about 140 more languages.`,
      { param, code: 'unsupported_language' },
    );
  }
  return language;
}
