/**
 * The built-in speech model (`local:speech`, also `local:tts`): CMU Flite for English in a media worker, eSpeak
 * NG for other languages in its own child process (optional, GPL-3.0), then the audio encoder. One call holds
 * one pool slot from synthesis to the encoded file, so the pool's size bounds all speech work, and the slot's
 * signal stops whichever of the three is running.
 */
import type { CallContext } from '../../core/call-context.js';
import type { SpeechCallOptions, SpeechModel } from '../../core/models.js';
import { encodeAudio, type EncodeOptions } from '../../engines/audio/encode-audio.js';
import { durationOf, type Pcm } from '../../engines/audio/pcm.js';
import type { MediaPool, MediaSlot } from '../../engines/media-pool.js';
import { createEspeakProcess, espeakInstalled, type EspeakProcess } from '../../engines/speech/espeak-process.js';
import { planVoice, type VoicePlan } from '../../engines/speech/voices.js';

export interface LocalSpeechOptions {
  /** Whether eSpeak NG may be used; default: whether its package is installed. `false` simulates its absence. */
  espeak?: boolean;
  /** Milliseconds an idle eSpeak process is kept warm. */
  espeakIdleMs?: number;
  encode?: EncodeOptions;
}

/** eSpeak's rate range in words per minute; 175 is its normal speed. */
const ESPEAK_WPM = { normal: 175, min: 80, max: 450 } as const;

export interface LocalSpeechModel extends SpeechModel {
  close(): void;
}

export function createLocalSpeechModel(pool: MediaPool, options: LocalSpeechOptions = {}): LocalSpeechModel {
  const espeakAvailable = options.espeak ?? espeakInstalled();
  let espeak: EspeakProcess | undefined;

  async function speak(plan: VoicePlan, call: SpeechCallOptions, slot: MediaSlot, context: CallContext): Promise<Pcm> {
    const pitch = Math.max(-12, Math.min(12, call.pitch + plan.pitchOffset));
    if (plan.engine === 'flite') {
      return slot.run('speech', { text: call.input, voice: plan.voice, speed: call.speed, pitch, volume: call.volume });
    }
    const wpm = ESPEAK_WPM.normal * call.speed;
    const rate = Math.round(Math.max(ESPEAK_WPM.min, Math.min(ESPEAK_WPM.max, wpm)));
    if (rate !== Math.round(wpm)) {
      context.warn({
        field: 'speed',
        reason: `eSpeak NG speaks ${ESPEAK_WPM.min}–${ESPEAK_WPM.max} words a minute; speed ${call.speed} was limited to ${(rate / ESPEAK_WPM.normal).toFixed(2)}`,
      });
    }
    // eSpeak speaks at its normal volume; the child brings it to the common loudness and applies the caller's volume.
    espeak ??= createEspeakProcess({ idleMs: options.espeakIdleMs });
    return espeak.synthesize(
      {
        text: call.input,
        voice: plan.voice,
        rate,
        pitch: Math.round(Math.max(0, Math.min(99, 50 + (pitch * 49) / 12))),
        gain: call.volume,
      },
      slot.signal,
    );
  }

  return {
    provider: 'local',
    modelId: 'speech',
    async synthesize(call, context) {
      const plan = planVoice(call.voice, call.language, { espeak: espeakAvailable });
      if (call.instructions) {
        context.warn({ field: 'instructions', reason: 'the built-in speech engines take no instructions' });
      }
      return pool.use(
        context.signal,
        async (slot) => {
          const pcm = await speak(plan, call, slot, context);
          const audio = await encodeAudio(pcm, call.format, slot, options.encode);
          return {
            audio,
            usage: { characters: call.input.length, seconds: Math.round(durationOf(pcm) * 1000) / 1000 },
          };
        },
        { owner: context.owner },
      );
    },
    close() {
      espeak?.close();
    },
  };
}
