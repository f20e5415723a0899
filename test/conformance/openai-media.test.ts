/**
 * Conformance: the OFFICIAL `openai` SDK (6.x) against a real Omnigate server with no upstream, on the built-in
 * media engines: `images.generate` by URL (the signed link loads with a plain fetch, no key) and by base64, and
 * `audio.speech.create` in each of the six formats, every answer decoded rather than byte-counted.
 */
import { BadRequestError } from 'openai';
import { describe, expect, it } from 'vitest';
import { probeAudio } from '../helpers/probe-audio.js';
import { imageKind, pngSize, wavInfo } from '../helpers/probe-media.js';
import { openAIServer } from './start-server.js';

const ctx = openAIServer();

describe('images.generate', () => {
  it('url: a signed link on our base URL that loads without a key', async () => {
    const result = await ctx.client.images.generate({
      model: 'local:image',
      prompt: 'a lighthouse on a cliff at night',
      size: '512x512' as never,
    });
    const url = result.data?.[0]?.url;
    expect(url?.startsWith(`${ctx.started.baseURL}/v1/media/`)).toBe(true);
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(pngSize(new Uint8Array(await response.arrayBuffer()))).toEqual({ width: 512, height: 512 });
  });

  it('b64_json: n images, decodable, in the asked format', async () => {
    const result = await ctx.client.images.generate({
      model: 'local:image',
      prompt: 'autumn forest by a lake',
      n: 2,
      size: '256x256' as never,
      response_format: 'b64_json',
      output_format: 'jpeg',
    });
    expect(result.data).toHaveLength(2);
    expect(result.output_format).toBe('jpeg');
    for (const item of result.data ?? []) {
      expect(imageKind(Buffer.from(item.b64_json!, 'base64'))).toBe('jpeg');
    }
  });

  it('a bad request is the SDK’s BadRequestError', async () => {
    const error = await ctx.client.images
      .generate({ model: 'local:image', prompt: 'x', size: '9999x9999' as never })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
  });
});

describe('audio.speech.create', () => {
  const expected = { mp3: 'mp3', opus: 'opus', aac: 'aac', flac: 'flac', wav: 'pcm_s16le', pcm: 'pcm_s16le' } as const;

  it.each(Object.keys(expected) as Array<keyof typeof expected>)('%s', async (format) => {
    const response = await ctx.client.audio.speech.create({
      model: 'local:speech',
      voice: 'alloy',
      input: 'Omnigate speaks every format.',
      response_format: format,
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const probe = await probeAudio(bytes, format);
    expect(probe.codec).toBe(expected[format]);
    expect(probe.decodedSeconds).toBeGreaterThan(1);
    if (format === 'wav') {
      expect(wavInfo(bytes).channels).toBe(1);
    }
    if (format === 'pcm') {
      expect(probe.sampleRate).toBe(24_000);
    }
  });
});
