import { describe, expect, it } from 'vitest';
import { planVoice } from './voices.js';

const withEspeak = { espeak: true };
const withoutEspeak = { espeak: false };

describe('planVoice', () => {
  it.each([
    ['alloy', 'auto', { engine: 'flite', voice: 'slt', pitchOffset: 0 }],
    ['Onyx', 'en-US', { engine: 'flite', voice: 'rms', pitchOffset: -2 }],
    ['kal16', 'en-GB', { engine: 'flite', voice: 'kal16', pitchOffset: 0 }],
    ['cedar', 'en', { engine: 'flite', voice: 'rms', pitchOffset: 1 }],
    ['alloy', 'fr-FR', { engine: 'espeak', voice: 'fr-fr+f3', pitchOffset: 0 }],
    ['rms', 'de-DE', { engine: 'espeak', voice: 'de+m3', pitchOffset: 0 }],
    ['fr', 'auto', { engine: 'espeak', voice: 'fr', pitchOffset: 0 }],
    ['en-us+f3', 'auto', { engine: 'espeak', voice: 'en-us+f3', pitchOffset: 0 }],
    ['en-us+f3', 'pt-BR', { engine: 'espeak', voice: 'pt-br+f3', pitchOffset: 0 }],
  ] as const)('voice %s in language %s', (voice, language, plan) => {
    expect(planVoice(voice, language, withEspeak)).toEqual(plan);
  });

  it.each(['bogus', 'xx', 'fr+nosuchvariant', 'fr+f3+m1'])(
    'refuses the unknown voice %s with a 400 naming valid ones',
    (voice) => {
      expect(() => planVoice(voice, 'auto', withEspeak)).toThrow(
        expect.objectContaining({ status: 400, param: 'voice', message: expect.stringContaining('alloy') }),
      );
    },
  );

  it('refuses a language no engine speaks', () => {
    expect(() => planVoice('alloy', 'tlh', withEspeak)).toThrow(
      expect.objectContaining({ status: 400, param: 'language' }),
    );
  });

  it('without eSpeak, speaks English and refuses other languages saying how to enable them', () => {
    expect(planVoice('nova', 'en-US', withoutEspeak)).toMatchObject({ engine: 'flite' });
    expect(() => planVoice('nova', 'fr-FR', withoutEspeak)).toThrow(
      expect.objectContaining({
        status: 400,
        param: 'language',
        message: expect.stringMatching(/only English.*@echogarden\/espeak-ng-emscripten/),
      }),
    );
  });
});
