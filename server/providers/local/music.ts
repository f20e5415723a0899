/**
 * `local:music`: the built-in composer. One generation holds one pool slot from the composition to the encoded
 * file: the worker composes and renders the PCM, then the audio encoder runs under the same slot. There is no
 * singing voice, so the piece is always instrumental and the lyrics only tip the mood; a caller who asked for
 * a sung piece is told so through a call warning rather than refused.
 */
import type { CallContext } from '../../core/call-context.js';
import type { MusicCallOptions, MusicModel } from '../../core/models.js';
import { durationOf } from '../../engines/audio/pcm.js';
import { encodeAudio } from '../../engines/audio/encode-audio.js';
import type { MediaPool } from '../../engines/media-pool.js';

export function createLocalMusicModel(pool: MediaPool): MusicModel {
  return {
    provider: 'local',
    modelId: 'music',
    compose(options: MusicCallOptions, context: CallContext) {
      if (options.lyrics && !options.instrumental) {
        context.warn({
          field: 'lyrics',
          reason: 'local:music has no singing voice: the piece is instrumental and the lyrics only set its mood',
        });
      }
      return pool.use(
        context.signal,
        async (slot) => {
          const pcm = await slot.run('music', {
            prompt: options.prompt,
            lyrics: options.lyrics,
            durationSeconds: options.durationSeconds,
            seed: options.seed,
          });
          const audio = await encodeAudio(pcm, options.format, slot);
          const durationSeconds = durationOf(pcm);
          return { audio, durationSeconds, usage: { seconds: durationSeconds } };
        },
        { owner: context.owner },
      );
    },
  };
}
