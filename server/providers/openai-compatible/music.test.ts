import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sendBytes, sendJson } from '../../../test/fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../../../test/fakes/fake-upstream.js';
import { sampleAudio } from '../../../test/fakes/media-samples.js';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import type { MusicCallOptions } from '../../core/models.js';
import { parseConfigFile } from '../../config.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { createOpenAICompatibleProvider, type OpenAICompatibleProvider } from './index.js';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const OPTIONS: MusicCallOptions = {
  prompt: 'lo-fi piano',
  lyrics: 'la la',
  instrumental: false,
  durationSeconds: 2,
  seed: 42,
  format: 'mp3',
};

let upstream: FakeUpstream;
let internal: FakeUpstream;
let providers: OpenAICompatibleProvider[];
let warnings: CallWarning[];
let mp3: Uint8Array;
let wav: Uint8Array;

/** The provider as the YAML configuration would build it, so the defaults tested are the schema's. */
function providerFrom(musicYaml: string): OpenAICompatibleProvider {
  const yaml = `providers:\n  songs:\n    type: openai-compatible\n    base_url: ${upstream.origin}/v1\n    timeout_ms: 5000\n${musicYaml.replace(/^/gm, '    ')}\n`;
  const parsed = parseConfigFile(yaml, {});
  const config = { ...parsed.providers.songs!, id: 'songs' } as OpenAICompatibleConfig;
  const provider = createOpenAICompatibleProvider(config);
  providers.push(provider);
  return provider;
}

function context(): CallContext {
  return { signal: AbortSignal.timeout(10_000), requestId: 'req_1', warn: (warning) => warnings.push(warning) };
}

const json = (body: unknown) => (_request: unknown, res: ServerResponse) => sendJson(res, 200, JSON.stringify(body));

beforeAll(async () => {
  [mp3, wav] = await Promise.all([sampleAudio('mp3', 2), sampleAudio('wav', 2)]);
  upstream = await startFakeUpstream();
  internal = await startFakeUpstream((_request, res) => sendBytes(res, mp3, 'audio/mpeg'));
});

beforeEach(() => {
  providers = [];
  warnings = [];
  upstream.requests.length = 0;
});

afterEach(async () => {
  await Promise.all(providers.map((provider) => provider.close()));
  expect(internal.requests).toEqual([]);
});

afterAll(async () => {
  await Promise.all([upstream.close(), internal.close()]);
});

describe('OpenAI-compatible music by configuration', () => {
  it('offers no music without a music setting', () => {
    const provider = createOpenAICompatibleProvider(plainConfig());
    providers.push(provider);
    expect(provider.models.music).toBeUndefined();
    expect(provider.models.image).toBeTypeOf('function');
    expect(provider.models.speech).toBeTypeOf('function');
  });

  it('posts the default fields and returns the answer body as audio', async () => {
    upstream.handle((_request, res) => sendBytes(res, mp3, 'application/octet-stream'));
    const result = await providerFrom('music: {}').models.music!('musicgen-small').compose(OPTIONS, context());
    const [request] = upstream.requests;
    expect(request!.url).toBe('/v1/music/generations');
    expect(request!.body).toEqual({
      model: 'musicgen-small',
      prompt: 'lo-fi piano',
      lyrics: 'la la',
      instrumental: false,
      duration: 2,
      seed: 42,
      response_format: 'mp3',
    });
    expect(sha(result.audio.data)).toBe(sha(mp3));
    expect(result.audio.mediaType).toBe('audio/mpeg');
    expect(Math.abs(result.durationSeconds - 2)).toBeLessThan(0.1);
    expect(result.usage.seconds).toBe(result.durationSeconds);
  });

  it('maps field names, leaves out fields set to false, adds constant fields, reads base64 at a pointer', async () => {
    upstream.handle(
      json({ output: { clips: [{ audio_base64: Buffer.from(wav).toString('base64'), seconds: 2.25 }] } }),
    );
    const provider = providerFrom(
      [
        'music:',
        '  path: /audio/compose',
        '  fields: { prompt: caption, lyrics: lyric_text, duration: audio_duration, seed: false, format: false, model: false }',
        '  body: { task: text2music, steps: 8 }',
        '  answer: base64',
        '  pointer: /output/clips/0/audio_base64',
        '  duration_pointer: /output/clips/0/seconds',
      ].join('\n'),
    );
    const result = await provider.models.music!('ace-step').compose({ ...OPTIONS, format: 'wav' }, context());
    expect(upstream.requests[0]!.url).toBe('/v1/audio/compose');
    expect(upstream.requests[0]!.body).toEqual({
      task: 'text2music',
      steps: 8,
      caption: 'lo-fi piano',
      lyric_text: 'la la',
      instrumental: false,
      audio_duration: 2,
    });
    expect(sha(result.audio.data)).toBe(sha(wav));
    expect(result.audio.mediaType).toBe('audio/wav');
    expect(result.durationSeconds).toBe(2.25); // as the answer says
    expect(warnings).toEqual([]);
  });

  it("fetches a URL at the pointer on the upstream's own origin, and warns when the format differs", async () => {
    upstream.handle(
      byPath({
        '/v1/music/generations': json({ data: [{ url: `${upstream.origin}/files/song.mp3` }] }),
        '/files/song.mp3': (_request, res) => sendBytes(res, mp3, 'audio/mpeg'),
      }),
    );
    const provider = providerFrom('music: { answer: url, pointer: /data/0/url }');
    const result = await provider.models.music!('m').compose({ ...OPTIONS, format: 'flac' }, context());
    expect(upstream.requests.map((request) => request.url)).toEqual(['/v1/music/generations', '/files/song.mp3']);
    expect(sha(result.audio.data)).toBe(sha(mp3));
    expect(result.audio.mediaType).toBe('audio/mpeg');
    expect(warnings).toEqual([{ field: 'response_format', reason: 'upstream songs answered mp3 instead of flac' }]);
  });

  it('refuses a URL to another loopback server', async () => {
    upstream.handle(json({ audio_url: `${internal.origin}/song.mp3` }));
    const provider = providerFrom('music: { answer: url, pointer: /audio_url }');
    await expect(provider.models.music!('m').compose(OPTIONS, context())).rejects.toMatchObject({
      status: 502,
      code: 'upstream_url_refused',
    });
  });

  it('answers 502 when the pointer finds nothing or the bytes are no known audio', async () => {
    upstream.handle(json({ data: [] }));
    await expect(
      providerFrom('music: { answer: base64, pointer: /data/0/b64 }').models.music!('m').compose(OPTIONS, context()),
    ).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/no text at \/data\/0\/b64/) });
    upstream.handle((_request, res) => sendBytes(res, new TextEncoder().encode('<html>busy</html>'), 'audio/mpeg'));
    await expect(providerFrom('music: {}').models.music!('m').compose(OPTIONS, context())).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/not mp3, wav or flac/),
    });
  });

  it('refuses a configuration whose answer needs a pointer it lacks', () => {
    expect(() => providerFrom('music: { answer: url }')).toThrow(
      /music\.pointer: answer base64 and url need a pointer/,
    );
    expect(() => providerFrom('music: { fields: { tempo: bpm } }')).toThrow(/music\.fields/);
  });
});

function plainConfig(): OpenAICompatibleConfig {
  return {
    id: 'plain',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    timeout_ms: 5_000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
}
