import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sendBytes, sendJson } from '../../../test/fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../../../test/fakes/fake-upstream.js';
import { sampleAudio } from '../../../test/fakes/media-samples.js';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import { ApiError } from '../../core/api-error.js';
import { SPEECH_FORMATS, type SpeechCallOptions, type SpeechFormat } from '../../core/models.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { createOpenAICompatibleProvider, type OpenAICompatibleProvider } from './index.js';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const OPTIONS: SpeechCallOptions = {
  input: 'Héllo there, gateway.',
  voice: 'alloy',
  format: 'mp3',
  speed: 1.25,
  volume: 1,
  pitch: 0,
  language: 'auto',
};
const MEDIA_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

let upstream: FakeUpstream;
let provider: OpenAICompatibleProvider;
let warnings: CallWarning[];
const samples = new Map<SpeechFormat, Uint8Array>();

function config(): OpenAICompatibleConfig {
  return {
    id: 'tts',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    timeout_ms: 5_000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
}

function context(): CallContext {
  return { signal: AbortSignal.timeout(10_000), requestId: 'req_1', warn: (warning) => warnings.push(warning) };
}

beforeAll(async () => {
  for (const format of SPEECH_FORMATS) {
    samples.set(format, await sampleAudio(format, 1.5));
  }
  upstream = await startFakeUpstream();
});

beforeEach(() => {
  provider = createOpenAICompatibleProvider(config());
  warnings = [];
  upstream.requests.length = 0;
});

afterEach(() => provider.close());
afterAll(() => upstream.close());

describe('OpenAI-compatible speech', () => {
  it.each(SPEECH_FORMATS)('passes %s bytes through with the media type of the format asked for', async (format) => {
    const bytes = samples.get(format)!;
    // What servers send as content-type varies (octet-stream, audio/opus, …); ours is the format's.
    upstream.handle((_request, res) => sendBytes(res, bytes, 'application/octet-stream'));
    const result = await provider.models.speech!('tts-1').synthesize(
      { ...OPTIONS, format, instructions: 'cheerful' },
      context(),
    );
    const [request] = upstream.requests;
    expect(request!.url).toBe('/v1/audio/speech');
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toEqual({
      model: 'tts-1',
      input: 'Héllo there, gateway.',
      voice: 'alloy',
      response_format: format,
      speed: 1.25,
      instructions: 'cheerful',
    });
    expect(sha(result.audio.data)).toBe(sha(bytes));
    expect(result.audio.mediaType).toBe(MEDIA_TYPES[format]);
    expect(result.usage.characters).toBe(21);
    if (format === 'flac') {
      // A streamed FLAC carries no sample total: its seconds are only estimated from its size.
      expect(result.usage.seconds).toBeGreaterThan(0);
    } else {
      expect(Math.abs(result.usage.seconds - 1.5)).toBeLessThan(0.1);
    }
    expect(warnings).toEqual([]);
  });

  it("warns of the settings OpenAI's API has no field for", async () => {
    upstream.handle((_request, res) => sendBytes(res, samples.get('wav')!, 'audio/wav'));
    await provider.models.speech!('kokoro').synthesize(
      { ...OPTIONS, format: 'wav', volume: 0.5, pitch: 2, language: 'de' },
      context(),
    );
    expect(upstream.requests[0]!.body).not.toHaveProperty('volume');
    expect(warnings.map((warning) => warning.field)).toEqual(['volume', 'pitch', 'language']);
  });

  it('answers 502 for a 200 that is JSON instead of audio, and maps upstream statuses', async () => {
    upstream.handle((_request, res) => sendJson(res, 200, '{"error":"voice not loaded"}'));
    await expect(provider.models.speech!('tts-1').synthesize(OPTIONS, context())).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/application\/json instead of audio/),
    });
    upstream.handle((_request, res) => sendJson(res, 400, '{"detail":"unknown voice alloy"}'));
    const refused = await provider.models.speech!('tts-1')
      .synthesize(OPTIONS, context())
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      status: 400,
      code: 'upstream_rejected',
      message: expect.stringContaining('unknown voice alloy'),
    });
    upstream.handle((_request, res) => sendJson(res, 502, '{"error":{"message":"model crashed"}}'));
    await expect(provider.models.speech!('tts-1').synthesize(OPTIONS, context())).rejects.toMatchObject({
      status: 502,
      code: 'upstream_error',
    });
  });
});
