import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config.js';
import { buildRegistry } from '../build-registry.js';

const YAML = `
providers:
  studio:
    type: openai-compatible
    base_url: http://127.0.0.1:9/v1
    music: { answer: url, pointer: /audio_url }
  plain:
    type: openai-compatible
    base_url: http://127.0.0.1:9/v1
models:
  - { provider: studio, model: gpt-image-1, type: image, id: pictures }
  - { provider: studio, model: tts-1, type: speech, id: voice }
  - { provider: studio, model: musicgen, type: music, id: songs }
  - { provider: plain, model: sora-2, type: video, id: clips }
  - { provider: plain, model: musicgen, type: music, id: no-songs }
`;

describe('configured upstream media models', () => {
  it('resolve to the interface of their type; a provider without music settings has none', async () => {
    const file = parseConfigFile(YAML, {});
    const registry = buildRegistry({
      providers: Object.entries(file.providers).map(([id, provider]) => ({ ...provider, id })),
      models: file.models,
      aliases: file.aliases,
      routes: file.routes,
    });
    try {
      const image = registry.model(registry.resolve('pictures', 'image'), 'image');
      expect([image.provider, image.modelId, typeof image.generate]).toEqual(['studio', 'gpt-image-1', 'function']);
      const speech = registry.model(registry.resolve('voice', 'speech'), 'speech');
      expect([speech.provider, speech.modelId, typeof speech.synthesize]).toEqual(['studio', 'tts-1', 'function']);
      const music = registry.model(registry.resolve('songs', 'music'), 'music');
      expect([music.provider, music.modelId, typeof music.compose]).toEqual(['studio', 'musicgen', 'function']);
      // Every OpenAI-compatible provider offers videos: configured ones and `provider:model` names alike.
      const video = registry.model(registry.resolve('clips', 'video'), 'video');
      expect([video.provider, video.modelId, typeof video.generate]).toEqual(['plain', 'sora-2', 'function']);
      const named = registry.model(registry.resolve('studio:sora-2-pro', 'video'), 'video');
      expect([named.provider, named.modelId]).toEqual(['studio', 'sora-2-pro']);
      expect(() => registry.model(registry.resolve('no-songs', 'music'), 'music')).toThrow(
        "Provider 'plain' serves no music model 'no-songs'.",
      );
    } finally {
      await registry.close();
    }
  });
});
