/**
 * Every built-in voice speaks at one loudness: the OpenAI voice names, the Flite voices and eSpeak NG voices,
 * measured on the served WAV by ffmpeg's own `ebur128` filter (EBU R128 integrated loudness), independent of the
 * server's measurement. Before normalisation they spread over about 16 dB.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../server/engines/audio/ffmpeg-process.js';
import { SPEECH_LOUDNESS_LUFS } from '../../server/engines/audio/loudness.js';
import { OPENAI_VOICES } from '../../server/engines/speech/voices.js';
import { createTestApp } from '../helpers/create-test-app.js';

const made = await createTestApp();
afterAll(() => made.registry.close());

const SENTENCE = 'The harbour master checked the tide tables twice before the boats went out this morning.';
const VOICES = [...Object.keys(OPENAI_VOICES), 'slt', 'rms', 'awb', 'kal16', 'en-us+f3', 'fr', 'de+m3'];

/** Integrated loudness in LUFS as ffmpeg's ebur128 filter reports it in its summary. */
async function ebur128(wav: Uint8Array): Promise<number> {
  const ffmpeg = ffmpegPath();
  if (!ffmpeg) {
    throw new Error('the measurement needs the ffmpeg binary');
  }
  const directory = await mkdtemp(join(tmpdir(), 'speech-loudness-'));
  try {
    const path = join(directory, 'speech.wav');
    await writeFile(path, wav);
    const stderr = await new Promise<string>((resolve, reject) => {
      execFile(
        ffmpeg,
        ['-hide_banner', '-nostats', '-i', path, '-af', 'ebur128', '-f', 'null', '-'],
        (error, _out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(err)),
      );
    });
    const summary = /Integrated loudness:\s+I:\s+(-?\d+(?:\.\d+)?) LUFS/.exec(stderr);
    if (!summary) {
      throw new Error(`no integrated loudness in:\n${stderr}`);
    }
    return Number(summary[1]);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function speak(voice: string, extra: Record<string, unknown> = {}): Promise<Buffer> {
  const res = await request(made.app)
    .post('/v1/audio/speech')
    .set('authorization', `Bearer ${made.key}`)
    .send({ model: 'local:speech', input: SENTENCE, voice, response_format: 'wav', ...extra })
    .buffer(true)
    .parse((response, callback) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => callback(null, Buffer.concat(chunks)));
    });
  expect(res.status, String(res.body)).toBe(200);
  return res.body as Buffer;
}

describe('speech loudness', () => {
  it(`brings every built-in voice to ${SPEECH_LOUDNESS_LUFS} LUFS integrated (±1.5 LU, by ffmpeg's ebur128)`, async () => {
    const measured: Record<string, number> = {};
    for (const voice of VOICES) {
      measured[voice] = await ebur128(await speak(voice));
    }
    const off = Object.entries(measured).filter(([, lufs]) => Math.abs(lufs - SPEECH_LOUDNESS_LUFS) > 1.5);
    expect(off, JSON.stringify(measured)).toEqual([]);
  }, 120_000);

  it('keeps volume a gain on top of the common loudness: 0.5 is 6 dB quieter', async () => {
    const normal = await ebur128(await speak('echo'));
    const half = await ebur128(await speak('echo', { volume: 0.5 }));
    expect(normal - half).toBeGreaterThan(5);
    expect(normal - half).toBeLessThan(7);
  }, 60_000);
});
