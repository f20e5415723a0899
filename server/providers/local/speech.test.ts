import { afterAll, describe, expect, it } from 'vitest';
import type { CallWarning } from '../../core/call-context.js';
import type { SpeechCallOptions } from '../../core/models.js';
import { createMediaPool } from '../../engines/media-pool.js';
import { childProcesses } from '../../../test/helpers/child-processes.js';
import { probeAudio } from '../../../test/helpers/probe-audio.js';
import { createLocalSpeechModel } from './speech.js';

const pool = createMediaPool({ workers: 1, queueLimit: 4, jobTimeoutMs: 60_000 });
const model = createLocalSpeechModel(pool, { espeakIdleMs: 5_000 });
afterAll(async () => {
  model.close();
  await pool.close();
});

const ENGLISH = 'The quick brown fox jumps over the lazy dog near the riverbank.';
const FRENCH = 'Bonjour et bienvenue. Votre commande a bien été expédiée.';

function call(overrides: Partial<SpeechCallOptions> = {}, signal = new AbortController().signal) {
  const warnings: CallWarning[] = [];
  const options: SpeechCallOptions = {
    input: ENGLISH,
    voice: 'alloy',
    format: 'wav',
    speed: 1,
    pitch: 0,
    volume: 1,
    language: 'auto',
    ...overrides,
  };
  return {
    warnings,
    result: model.synthesize(options, { signal, requestId: 'test', warn: (warning) => warnings.push(warning) }),
  };
}

const espeakProcesses = () => childProcesses('espeak');

describe('local speech model', () => {
  it.each([
    ['mp3', 'mp3', 'audio/mpeg', 'mp3'],
    ['opus', 'ogg', 'audio/ogg', 'opus'],
    ['aac', 'aac', 'audio/aac', 'aac'],
    ['flac', 'flac', 'audio/flac', 'flac'],
    ['wav', 'wav', 'audio/wav', 'pcm_s16le'],
  ] as const)(
    'speaks English as %s that decodes to the reported seconds',
    async (format, extension, mediaType, codec) => {
      const { audio, usage } = await call({ format }).result;
      expect(audio.mediaType).toBe(mediaType);
      expect(usage.characters).toBe(ENGLISH.length);
      const probe = await probeAudio(audio.data, extension);
      expect(probe.codec).toBe(codec);
      expect(Math.abs(probe.decodedSeconds - usage.seconds)).toBeLessThan(0.2);
    },
  );

  it('answers pcm as 24 kHz mono 16-bit: 48,000 bytes a second', async () => {
    const { audio, usage } = await call({ format: 'pcm' }).result;
    expect(audio.mediaType).toBe('audio/pcm');
    expect(Math.abs(audio.data.length - 48_000 * usage.seconds)).toBeLessThan(48_000 * 0.01);
  });

  it('speed 2 about halves the length', async () => {
    const normal = await call().result;
    const fast = await call({ speed: 2 }).result;
    expect(fast.usage.seconds / normal.usage.seconds).toBeGreaterThan(0.4);
    expect(fast.usage.seconds / normal.usage.seconds).toBeLessThan(0.6);
  });

  it('refuses an unknown voice with a 400 on voice', async () => {
    await expect(call({ voice: 'nobody' }).result).rejects.toMatchObject({ status: 400, param: 'voice' });
  });

  it('speaks French with eSpeak NG in its own process, warm on the second call', async () => {
    const first = await call({ input: FRENCH, voice: 'fr', format: 'opus', language: 'fr-FR' }).result;
    const probe = await probeAudio(first.audio.data, 'ogg');
    expect(probe.codec).toBe('opus');
    expect(probe.decodedSeconds).toBeGreaterThan(2);
    expect(Math.abs(probe.decodedSeconds - first.usage.seconds)).toBeLessThan(0.1);
    // Warm: the second call starts no eSpeak NG process of its own (the first one's still serves it).
    const before = await espeakProcesses();
    const second = await call({ input: FRENCH, voice: 'nova', format: 'wav', language: 'fr', speed: 1.5, volume: 0.5 })
      .result;
    expect(before).toHaveLength(1);
    expect(await espeakProcesses()).toEqual(before);
    expect(second.usage.seconds).toBeLessThan(first.usage.seconds * 0.8);
  });

  it('limits an eSpeak speed beyond its range and says so', async () => {
    const { result, warnings } = call({ input: FRENCH, voice: 'fr', speed: 4 });
    await result;
    expect(warnings).toEqual([expect.objectContaining({ field: 'speed' })]);
  });

  it('stops eSpeak when the caller goes away, and starts it again for the next call', async () => {
    const controller = new AbortController();
    const long = call({ input: FRENCH.repeat(40), voice: 'fr', speed: 0.5 }, controller.signal);
    setTimeout(() => controller.abort(new Error('caller left')), 400);
    await expect(long.result).rejects.toThrow('caller left');
    const after = await call({ input: FRENCH, voice: 'fr' }).result;
    expect(after.usage.seconds).toBeGreaterThan(2);
  });

  it('without eSpeak, answers English and refuses French with a 400 on language', async () => {
    const englishOnly = createLocalSpeechModel(pool, { espeak: false });
    const context = { signal: new AbortController().signal, requestId: 'test', warn: () => {} };
    const options: SpeechCallOptions = {
      input: FRENCH,
      voice: 'alloy',
      format: 'wav',
      speed: 1,
      pitch: 0,
      volume: 1,
      language: 'fr-FR',
    };
    await expect(englishOnly.synthesize(options, context)).rejects.toMatchObject({
      status: 400,
      param: 'language',
      message: expect.stringContaining('espeak-ng'),
    });
    await expect(
      englishOnly.synthesize({ ...options, input: ENGLISH, language: 'en' }, context),
    ).resolves.toMatchObject({ audio: { mediaType: 'audio/wav' } });
    englishOnly.close();
  });
});
