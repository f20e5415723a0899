/**
 * Conformance: the OFFICIAL `openai` SDK's `audio.transcriptions.create` and `audio.translations.create`
 * against a real Omnigate app whose transcription models are on a fake OpenAI-compatible upstream. The fake
 * checks what it received — the multipart fields, and that the audio decodes (ffmpeg reads the received bytes)
 * — and answers like OpenAI. Also: conversion for an upstream that takes only WAV, streaming, bad input as 4xx
 * in the envelope, and `capability_unavailable` when no transcription model is configured.
 */
import OpenAI, { toFile } from 'openai';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import { sendJson as sendJsonText } from '../fakes/answers.js';

const sendJson = (res: ServerResponse, body: unknown) => sendJsonText(res, 200, JSON.stringify(body));
import { byPath, startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../fakes/fake-upstream.js';
import { sampleAudio } from '../fakes/media-samples.js';
import { mcpToolCall } from '../helpers/mcp-tool-call.js';
import { probeAudio } from '../helpers/probe-audio.js';
import { startServer, type StartedServer } from './start-server.js';

interface Received {
  path: string;
  fields: Record<string, string[]>;
  filename: string;
  fileType: string;
  /** ffmpeg's reading of the received audio. */
  codec: string;
  decodedSeconds: number;
}

let upstream: FakeUpstream;
let server: StartedServer;
let client: OpenAI;
let received: Received[] = [];
let wav: Uint8Array;
let mp3: Uint8Array;
let webm: Uint8Array;
let m4a: Uint8Array;

async function readForm(request: RecordedRequest): Promise<Received> {
  const form = await new Request('http://fake.invalid/', {
    method: 'POST',
    body: new Uint8Array(request.raw),
    headers: { 'content-type': request.headers['content-type']! },
  }).formData();
  const fields: Record<string, string[]> = {};
  let file: File | undefined;
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      (fields[name] ??= []).push(value);
    } else {
      file = value;
    }
  }
  const bytes = new Uint8Array(await file!.arrayBuffer());
  const extension = file!.name.split('.').pop()!;
  const probe = await probeAudio(bytes, extension);
  return {
    path: request.url,
    fields,
    filename: file!.name,
    fileType: file!.type,
    codec: probe.codec,
    decodedSeconds: probe.decodedSeconds,
  };
}

const SEGMENTS = [
  {
    id: 0,
    seek: 0,
    start: 0,
    end: 1.2,
    text: ' Hello there.',
    tokens: [50364, 2425],
    temperature: 0,
    avg_logprob: -0.2,
    compression_ratio: 0.8,
    no_speech_prob: 0.01,
  },
  {
    id: 1,
    seek: 0,
    start: 1.2,
    end: 2,
    text: ' General Kenobi.',
    tokens: [50424],
    temperature: 0,
    avg_logprob: -0.3,
    compression_ratio: 0.8,
    no_speech_prob: 0.02,
  },
];

const DIARIZED_SEGMENTS = [
  { type: 'transcript.text.segment', id: 'seg_0', start: 0, end: 1.2, text: 'Hello there.', speaker: 'A' },
  { type: 'transcript.text.segment', id: 'seg_1', start: 1.2, end: 2, text: 'General Kenobi.', speaker: 'B' },
];

async function answerTranscription(request: RecordedRequest, res: ServerResponse, translate: boolean): Promise<void> {
  const got = await readForm(request);
  received.push(got);
  const format = got.fields.response_format?.[0];
  const text = translate ? 'Hello and welcome.' : 'Hello there. General Kenobi.';
  if (got.fields.stream?.[0] === 'true' && format === 'diarized_json') {
    // gpt-4o-transcribe-diarize streaming: deltas naming their segment, each segment once complete, then done.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const events = [
      { type: 'transcript.text.delta', delta: 'Hello', segment_id: 'seg_0' },
      { type: 'transcript.text.delta', delta: ' there.', segment_id: 'seg_0' },
      DIARIZED_SEGMENTS[0],
      { type: 'transcript.text.delta', delta: 'General Kenobi.', segment_id: 'seg_1' },
      DIARIZED_SEGMENTS[1],
      {
        type: 'transcript.text.done',
        text,
        usage: { type: 'tokens', input_tokens: 30, output_tokens: 8, total_tokens: 38 },
      },
    ];
    res.end(events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
    return;
  }
  if (got.fields.stream?.[0] === 'true') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const delta of ['Hello', ' there.', ' General Kenobi.']) {
      res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta })}\n\n`);
    }
    const usage = {
      type: 'tokens',
      input_tokens: 14,
      output_tokens: 6,
      total_tokens: 20,
      input_token_details: { text_tokens: 0, audio_tokens: 14 },
    };
    res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text, usage })}\n\n`);
    return;
  }
  if (format === 'diarized_json') {
    // gpt-4o-transcribe-diarize's answer: segments labelled by speaker.
    sendJson(res, {
      task: 'transcribe',
      duration: 2,
      text,
      segments: DIARIZED_SEGMENTS,
      usage: { type: 'tokens', input_tokens: 30, output_tokens: 8, total_tokens: 38 },
    });
    return;
  }
  if (format === 'verbose_json') {
    const granularities = got.fields['timestamp_granularities[]'] ?? [];
    sendJson(res, {
      task: translate ? 'translate' : 'transcribe',
      language: 'english',
      duration: 2,
      text,
      ...(granularities.includes('word')
        ? {
            words: [
              { word: 'Hello', start: 0.1, end: 0.5 },
              { word: 'there', start: 0.6, end: 1.1 },
            ],
          }
        : {}),
      ...(granularities.length === 0 || granularities.includes('segment') ? { segments: SEGMENTS } : {}),
      usage: { type: 'duration', seconds: 2 },
    });
    return;
  }
  sendJson(res, { text, usage: { type: 'duration', seconds: 2 } });
}

beforeAll(async () => {
  [wav, mp3, webm, m4a] = await Promise.all([
    sampleAudio('wav', 2, true),
    sampleAudio('mp3', 2),
    sampleAudio('webm', 2),
    sampleAudio('m4a', 2, true),
  ]);
  upstream = await startFakeUpstream();
  upstream.handle(
    byPath({
      '/v1/audio/transcriptions': (request, res) => answerTranscription(request, res, false),
      '/v1/audio/translations': (request, res) => answerTranscription(request, res, true),
    }),
  );
  const base = {
    type: 'openai-compatible',
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  } as const;
  const providers: ProviderConfig[] = [
    { ...base, id: 'fake', base_url: `${upstream.origin}/v1` },
    { ...base, id: 'wavonly', base_url: `${upstream.origin}/v1`, transcription: { accepted_formats: ['wav'] } },
  ];
  server = await startServer({
    providers,
    models: [
      { provider: 'fake', model: 'whisper-1', type: 'transcription', aliases: ['whisper'] },
      { provider: 'wavonly', model: 'whisper-wav', type: 'transcription', aliases: [] },
    ],
    transcription: { maxBytes: 1024 * 1024, maxSeconds: 30 },
  });
  client = new OpenAI({ apiKey: server.key, baseURL: `${server.baseURL}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

describe('audio.transcriptions.create', () => {
  it('json: the text, and the upstream got the file and every field the SDK sent', async () => {
    received = [];
    const result = await client.audio.transcriptions.create({
      file: await toFile(mp3, 'note.mp3'),
      model: 'whisper',
      language: 'en',
      prompt: 'A greeting.',
      temperature: 0.2,
    });
    expect(result.text).toBe('Hello there. General Kenobi.');
    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(got.path).toBe('/v1/audio/transcriptions');
    expect(got.fields).toEqual({
      model: ['whisper-1'],
      response_format: ['json'],
      language: ['en'],
      prompt: ['A greeting.'],
      temperature: ['0.2'],
    });
    expect(got.filename).toBe('note.mp3');
    expect(got.fileType).toBe('audio/mpeg');
    expect(got.codec).toBe('mp3');
    expect(got.decodedSeconds).toBeGreaterThan(1.8);
  });

  it('text: the text alone, as text/plain', async () => {
    const result = await client.audio.transcriptions.create({
      file: await toFile(wav, 'note.wav'),
      model: 'whisper',
      response_format: 'text',
    });
    expect(result).toBe('Hello there. General Kenobi.\n');
  });

  it('verbose_json with timestamp_granularities: words and segments, the arrays sent as repeated [] fields', async () => {
    received = [];
    const result = await client.audio.transcriptions.create({
      file: await toFile(wav, 'note.wav'),
      model: 'whisper',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(received[0]!.fields['timestamp_granularities[]']).toEqual(['word', 'segment']);
    expect((result as { task?: string }).task).toBe('transcribe');
    expect(result.language).toBe('english');
    expect(result.duration).toBe(2);
    expect(result.words).toEqual([
      { word: 'Hello', start: 0.1, end: 0.5 },
      { word: 'there', start: 0.6, end: 1.1 },
    ]);
    expect(result.segments?.map((segment) => segment.text)).toEqual([' Hello there.', ' General Kenobi.']);
    expect(result.segments?.[0]?.avg_logprob).toBe(-0.2);
  });

  it('srt and vtt: subtitles written from the segments of a verbose answer', async () => {
    received = [];
    const srt = await client.audio.transcriptions.create({
      file: await toFile(wav, 'note.wav'),
      model: 'whisper',
      response_format: 'srt',
    });
    expect(received[0]!.fields.response_format).toEqual(['verbose_json']);
    expect(received[0]!.fields['timestamp_granularities[]']).toEqual(['segment']);
    expect(srt).toBe(
      '1\n00:00:00,000 --> 00:00:01,200\nHello there.\n\n2\n00:00:01,200 --> 00:00:02,000\nGeneral Kenobi.\n',
    );
    const vtt = await client.audio.transcriptions.create({
      file: await toFile(wav, 'note.wav'),
      model: 'whisper',
      response_format: 'vtt',
    });
    expect(vtt).toBe(
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.200\nHello there.\n\n00:00:01.200 --> 00:00:02.000\nGeneral Kenobi.\n',
    );
  });

  it('an M4A file goes upstream as sent, decodable', async () => {
    received = [];
    await client.audio.transcriptions.create({ file: await toFile(m4a, 'memo.m4a'), model: 'whisper' });
    expect(received[0]!.filename).toBe('memo.m4a');
    expect(received[0]!.codec).toBe('aac');
  });

  it('conversion: WebM/Opus and MP3 in, WAV out to an upstream that takes only WAV', async () => {
    for (const [bytes, name] of [
      [webm, 'recording.webm'],
      [mp3, 'note.mp3'],
    ] as const) {
      received = [];
      const result = await client.audio.transcriptions.create({
        file: await toFile(bytes, name),
        model: 'wavonly:whisper-wav',
      });
      expect(result.text).toBe('Hello there. General Kenobi.');
      const got = received[0]!;
      expect(got.filename).toBe(`${name.split('.')[0]}.wav`);
      expect(got.fileType).toBe('audio/wav');
      expect(got.codec).toBe('pcm_s16le');
      expect(got.decodedSeconds).toBeGreaterThan(1.8);
      expect(got.decodedSeconds).toBeLessThan(2.2);
    }
  });

  it('stream: transcript.text.delta events then transcript.text.done with usage, as the SDK reads them', async () => {
    received = [];
    const stream = await client.audio.transcriptions.create({
      file: await toFile(wav, 'note.wav'),
      model: 'whisper',
      stream: true,
      include: ['logprobs'],
    });
    const events: Array<{ type: string; delta?: string; text?: string; usage?: unknown }> = [];
    for await (const event of stream) {
      events.push(event as never);
    }
    expect(received[0]!.fields.stream).toEqual(['true']);
    expect(received[0]!.fields['include[]']).toEqual(['logprobs']);
    expect(events.filter((event) => event.type === 'transcript.text.delta').map((event) => event.delta)).toEqual([
      'Hello',
      ' there.',
      ' General Kenobi.',
    ]);
    const done = events.at(-1)!;
    expect(done.type).toBe('transcript.text.done');
    expect(done.text).toBe('Hello there. General Kenobi.');
    expect(done.usage).toEqual({
      type: 'tokens',
      input_tokens: 14,
      output_tokens: 6,
      total_tokens: 20,
      input_token_details: { text_tokens: 0, audio_tokens: 14 },
    });
  });
});

describe('response_format diarized_json', () => {
  it('passes the diarizing upstream its format and answers its speaker-labelled segments', async () => {
    received = [];
    const transcript = await client.audio.transcriptions.create({
      file: await toFile(wav, 'meeting.wav'),
      model: 'fake:whisper-1',
      response_format: 'diarized_json',
      known_speaker_names: ['Obi-Wan'],
    } as Parameters<typeof client.audio.transcriptions.create>[0]);
    expect(received[0]!.fields.response_format).toEqual(['diarized_json']);
    expect(received[0]!.fields['known_speaker_names[]']).toEqual(['Obi-Wan']);
    expect(transcript).toEqual({
      task: 'transcribe',
      duration: 2,
      text: 'Hello there. General Kenobi.',
      segments: DIARIZED_SEGMENTS,
      usage: { type: 'tokens', input_tokens: 30, output_tokens: 8, total_tokens: 38 },
    });
  });

  it('streamed: deltas with their segment_id, a transcript.text.segment event per speaker segment, then done', async () => {
    received = [];
    const response = await fetch(`${server.baseURL}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}` },
      body: (() => {
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'meeting.wav');
        form.append('model', 'fake:whisper-1');
        form.append('response_format', 'diarized_json');
        form.append('stream', 'true');
        return form;
      })(),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await response.text()).split('\n\n').filter((frame) => frame.trim() !== '');
    const events = frames.map((frame) => ({
      event: /^event: (.*)$/m.exec(frame)?.[1],
      data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as Record<string, unknown>,
    }));
    expect(received[0]!.fields.response_format).toEqual(['diarized_json']);
    expect(received[0]!.fields.stream).toEqual(['true']);
    expect(events.map((event) => event.event)).toEqual(events.map((event) => event.data.type));
    expect(events.map((event) => event.data)).toEqual([
      { type: 'transcript.text.delta', delta: 'Hello', segment_id: 'seg_0' },
      { type: 'transcript.text.delta', delta: ' there.', segment_id: 'seg_0' },
      DIARIZED_SEGMENTS[0],
      { type: 'transcript.text.delta', delta: 'General Kenobi.', segment_id: 'seg_1' },
      DIARIZED_SEGMENTS[1],
      {
        type: 'transcript.text.done',
        text: 'Hello there. General Kenobi.',
        usage: { type: 'tokens', input_tokens: 30, output_tokens: 8, total_tokens: 38 },
      },
    ]);
  });

  it('is refused for a translation, before the upstream is called', async () => {
    received = [];
    const refused = (await client.audio.translations
      .create({
        file: await toFile(wav, 'bonjour.wav'),
        model: 'fake:whisper-1',
        response_format: 'diarized_json' as 'json',
      })
      .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(refused.status).toBe(400);
    expect(refused.code).toBe('invalid_value');
    expect(received).toEqual([]);
  });
});

describe('audio.translations.create', () => {
  it('json and verbose_json: English text from the upstream translation endpoint', async () => {
    received = [];
    const result = await client.audio.translations.create({
      file: await toFile(mp3, 'bonjour.mp3'),
      model: 'whisper',
      prompt: 'A greeting.',
    });
    expect(result.text).toBe('Hello and welcome.');
    expect(received[0]!.path).toBe('/v1/audio/translations');
    expect(received[0]!.fields).toEqual({ model: ['whisper-1'], response_format: ['json'], prompt: ['A greeting.'] });
    expect(received[0]!.codec).toBe('mp3');
    const verbose = await client.audio.translations.create({
      file: await toFile(mp3, 'bonjour.mp3'),
      model: 'whisper',
      response_format: 'verbose_json',
    });
    expect(verbose).toMatchObject({ task: 'translate', language: 'english', text: 'Hello and welcome.' });
  });
});

describe('bad input: 4xx in the envelope, and the upstream never called', () => {
  async function refusal(
    form: FormData,
  ): Promise<{ status: number; error: { code: string; param: string | null; message: string; type: string } }> {
    const response = await fetch(`${server.baseURL}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}` },
      body: form,
    });
    return { status: response.status, ...((await response.json()) as { error: never }) };
  }

  function formWith(file: Uint8Array | undefined, fields: Record<string, string>): FormData {
    const form = new FormData();
    if (file) {
      form.append('file', new Blob([new Uint8Array(file)]), 'clip.bin');
    }
    for (const [name, value] of Object.entries(fields)) {
      form.append(name, value);
    }
    return form;
  }

  it('not audio: 400 invalid_audio', async () => {
    const before = upstream.requests.length;
    const answer = await refusal(
      formWith(new TextEncoder().encode('this is plainly not audio at all'), { model: 'whisper' }),
    );
    expect(answer.status).toBe(400);
    expect(answer.error).toMatchObject({ code: 'invalid_audio', param: 'file', type: 'invalid_request_error' });
    expect(upstream.requests.length).toBe(before);
  });

  it('audio-looking bytes that do not decode: 400 invalid_audio', async () => {
    const fake = new Uint8Array(4096);
    fake.set(new TextEncoder().encode('OggS'));
    const answer = await refusal(formWith(fake, { model: 'whisper' }));
    expect(answer.status).toBe(400);
    expect(answer.error.code).toBe('invalid_audio');
  });

  it('too big: 413 naming the limit', async () => {
    const big = new Uint8Array(1024 * 1024 + 10);
    big.set(wav.subarray(0, 44));
    const answer = await refusal(formWith(big, { model: 'whisper' }));
    expect(answer.status).toBe(413);
    expect(answer.error.message).toContain('OMNIGATE_TRANSCRIPTION_MAX_BYTES');
  });

  it('too long: 400 audio_too_long, from the decoded length', async () => {
    const long = await sampleAudio('mp3', 33);
    const before = upstream.requests.length;
    const answer = await refusal(formWith(long, { model: 'whisper' }));
    expect(answer.status).toBe(400);
    expect(answer.error).toMatchObject({ code: 'audio_too_long', param: 'file' });
    expect(upstream.requests.length).toBe(before);
  });

  it('missing model: 400 naming it; bad granularity: 400 naming it', async () => {
    const missing = await refusal(formWith(wav, {}));
    expect(missing.status).toBe(400);
    expect(missing.error.message).toContain('model');
    const bad = await refusal(formWith(wav, { model: 'whisper', 'timestamp_granularities[]': 'sentence' }));
    expect(bad.status).toBe(400);
    expect(bad.error.param).toBe('timestamp_granularities[]');
  });

  it('a chat model: 400 wrong_model_type (transcription models are configured)', async () => {
    const answer = await refusal(formWith(wav, { model: 'local:chat' }));
    expect(answer.status).toBe(400);
    expect(answer.error.code).toBe('wrong_model_type');
  });
});

describe('no transcription model configured', () => {
  let bare: StartedServer;
  beforeAll(async () => {
    bare = await startServer();
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('503 capability_unavailable naming what to configure, through the SDK; /v1/models lists no transcription model', async () => {
    const sdk = new OpenAI({ apiKey: bare.key, baseURL: `${bare.baseURL}/v1`, maxRetries: 0 });
    const error = (await sdk.audio.transcriptions
      .create({ file: await toFile(wav, 'note.wav'), model: 'whisper-1' })
      .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(503);
    expect(error.code).toBe('capability_unavailable');
    expect(error.message).toContain('type transcription');
    expect(error.headers?.get('x-should-retry')).toBe('false');
    const models = await sdk.models.list();
    expect(models.data.some((model) => (model as { type?: string }).type === 'transcription')).toBe(false);
  });
});

describe('GET /v1/models', () => {
  it('lists the configured transcription models by type', async () => {
    const models = await client.models.list();
    const transcription = models.data.filter((model) => (model as { type?: string }).type === 'transcription');
    expect(transcription.map((model) => model.id).sort()).toEqual(['fake:whisper-1', 'wavonly:whisper-wav']);
  });
});

describe('usage and limits', () => {
  it('records the seconds of audio as media units, and a media-units limit refuses the next call', async () => {
    const limited = await startServer({
      providers: [
        {
          type: 'openai-compatible',
          id: 'fake',
          base_url: `${upstream.origin}/v1`,
          timeout_ms: 5000,
          max_connections: 4,
          headers: {},
          responses: 'translate',
        },
      ],
      models: [{ provider: 'fake', model: 'whisper-1', type: 'transcription', aliases: [] }],
      // The 2 s WAV (~96 KB) is estimated at 13 s (admitted); it settles at the 2 s decoded, and 2 + 13 > 13.
      limits: { defaults: {}, onStoreDown: 'allow', leaseMs: 60_000 },
      limitsSource: { limitsFor: () => ({ key: { mediaUnitsPerDay: 13 } }) },
    });
    try {
      const sdk = new OpenAI({ apiKey: limited.key, baseURL: `${limited.baseURL}/v1`, maxRetries: 0 });
      const { data, response } = await sdk.audio.transcriptions
        .create({ file: await toFile(wav, 'note.wav'), model: 'fake:whisper-1' })
        .withResponse();
      expect(data.text).toBe('Hello there. General Kenobi.');
      const requestId = response.headers.get('x-request-id');
      await limited.testApp.usage.flush();
      const usage = await fetch(`${limited.baseURL}/v1/usage?request_id=${requestId}`, {
        headers: { authorization: `Bearer ${limited.key}` },
      });
      const record = ((await usage.json()) as { data: Array<Record<string, unknown>> }).data[0]!;
      expect(record.operation).toBe('createTranscription');
      expect(record.model).toBe('fake:whisper-1');
      expect(record.media).toEqual({ seconds: expect.closeTo(2, 1) });
      const refused = (await sdk.audio.transcriptions
        .create({ file: await toFile(wav, 'note.wav'), model: 'fake:whisper-1' })
        .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
      expect(refused.status).toBe(429);
      expect(refused.message).toMatch(/media units per day/);
    } finally {
      await limited.close();
    }
  });
});

describe('the transcribe_audio MCP tool', () => {
  it('transcribes an uploaded file by id and base64 audio, as srt or text', async () => {
    const uploaded = await client.files.create({ file: await toFile(mp3, 'note.mp3'), purpose: 'user_data' });
    received = [];
    const byId = await mcpToolCall(server.testApp.app, server.key, 'transcribe_audio', {
      file_id: uploaded.id,
      response_format: 'srt',
    });
    expect(byId.isError).toBeFalsy();
    expect(byId.content[0]?.text).toBe(
      '1\n00:00:00,000 --> 00:00:01,200\nHello there.\n\n2\n00:00:01,200 --> 00:00:02,000\nGeneral Kenobi.\n',
    );
    expect(received[0]!.codec).toBe('mp3');
    expect(received[0]!.fields.model).toEqual(['whisper-1']);
    const inline = await mcpToolCall(server.testApp.app, server.key, 'transcribe_audio', {
      audio_base64: Buffer.from(webm).toString('base64'),
      model: 'wavonly:whisper-wav',
      task: 'translate',
    });
    expect(inline.isError).toBeFalsy();
    expect(inline.content[0]?.text).toBe('Hello and welcome.\n');
    expect(received[1]!.path).toBe('/v1/audio/translations');
    expect(received[1]!.codec).toBe('pcm_s16le');
    const notAudio = await mcpToolCall(server.testApp.app, server.key, 'transcribe_audio', {
      audio_base64: Buffer.from('not audio at all, only words').toString('base64'),
    });
    expect(notAudio.isError).toBe(true);
    expect(notAudio.content[0]?.text).toMatch(/invalid_audio/);
  });
});

describe('POST /v1/tools/transcribe_audio', () => {
  const invoke = (body: unknown) =>
    fetch(`${server.baseURL}/v1/tools/transcribe_audio`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers the tool result of an uploaded file and of base64 audio, as the MCP tool does', async () => {
    const uploaded = await client.files.create({ file: await toFile(mp3, 'note.mp3'), purpose: 'user_data' });
    received = [];
    const byId = await invoke({ file_id: uploaded.id, response_format: 'srt' });
    expect(byId.status).toBe(200);
    expect(byId.headers.get('x-request-id')).toBeTruthy();
    const srt = '1\n00:00:00,000 --> 00:00:01,200\nHello there.\n\n2\n00:00:01,200 --> 00:00:02,000\nGeneral Kenobi.\n';
    const body = (await byId.json()) as Record<string, unknown>;
    expect(body).toEqual({
      object: 'tool.result',
      tool: 'transcribe_audio',
      id: expect.stringMatching(/^tr_/),
      output: {
        model: 'fake:whisper-1',
        text: 'Hello there. General Kenobi.',
        seconds: expect.closeTo(2, 0),
        response_format: 'srt',
        content: srt,
      },
      content: srt,
    });
    expect(received[0]!.codec).toBe('mp3');
    expect(received[0]!.fields.model).toEqual(['whisper-1']);

    const inline = await invoke({ audio_base64: Buffer.from(webm).toString('base64'), task: 'translate' });
    expect(inline.status).toBe(200);
    expect(((await inline.json()) as { content: string }).content).toBe('Hello and welcome.\n');
    expect(received[1]!.path).toBe('/v1/audio/translations');
  });

  it('refuses what the contract or the audio checks refuse, with the upstream never called', async () => {
    received = [];
    const both = await invoke({ file_id: 'file-x', audio_base64: 'AAAA' });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { error: { code: string } }).error.code).toBe('missing_audio');
    const unknownField = await invoke({ audio_base64: 'AAAA', speed: 2 });
    expect(unknownField.status).toBe(400);
    const notAudio = await invoke({ audio_base64: Buffer.from('not audio at all, only words').toString('base64') });
    expect(notAudio.status).toBe(400);
    expect(((await notAudio.json()) as { error: { code: string } }).error.code).toBe('invalid_audio');
    expect(received).toEqual([]);
  });

  it('counts the seconds of audio in the media units, as the REST transcription does', async () => {
    const limited = await startServer({
      providers: [
        {
          type: 'openai-compatible',
          id: 'fake',
          base_url: `${upstream.origin}/v1`,
          timeout_ms: 5000,
          max_connections: 4,
          headers: {},
          responses: 'translate',
        },
      ],
      models: [{ provider: 'fake', model: 'whisper-1', type: 'transcription', aliases: [] }],
      // The 2 s WAV (~96 KB, ~128 KB as base64) is estimated at 12 s (admitted), settles at the 2 s decoded,
      // and 2 + 12 > 13 refuses the next.
      limits: { defaults: {}, onStoreDown: 'allow', leaseMs: 60_000 },
      limitsSource: { limitsFor: () => ({ key: { mediaUnitsPerDay: 13 } }) },
    });
    try {
      const call = () =>
        fetch(`${limited.baseURL}/v1/tools/transcribe_audio`, {
          method: 'POST',
          headers: { authorization: `Bearer ${limited.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ audio_base64: Buffer.from(wav).toString('base64') }),
        });
      const first = await call();
      expect(first.status).toBe(200);
      await limited.testApp.usage.flush();
      const usage = await fetch(`${limited.baseURL}/v1/usage?request_id=${first.headers.get('x-request-id')}`, {
        headers: { authorization: `Bearer ${limited.key}` },
      });
      const record = ((await usage.json()) as { data: Array<Record<string, unknown>> }).data[0]!;
      expect(record.operation).toBe('invokeTranscribeAudioTool');
      expect(record.media).toEqual({ seconds: expect.closeTo(2, 0) });
      const refused = await call();
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/media units per day/);
    } finally {
      await limited.close();
    }
  });
});
