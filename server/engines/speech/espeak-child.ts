/**
 * The eSpeak NG child process. eSpeak NG is GPL-3.0, so it never runs inside the (MIT) server process: the
 * server starts this program, talks to it over stdin/stdout (espeak-protocol.ts) and keeps it at arm's length.
 * One engine instance is kept for the life of the process (the wasm2js build is slow for its first calls).
 * Synthesis is synchronous; the server sends one request at a time.
 */
import { applyGain } from '../audio/apply-gain.js';
import { loudnessGain } from '../audio/loudness.js';
import type { EspeakReply, EspeakRequest } from './espeak-protocol.js';

interface EspeakWorker {
  set_voice(name: string): number;
  set_rate(wpm: number): void;
  set_pitch(pitch: number): void;
  set_volume(volume: number): void;
  readonly samplerate: number;
  list_voices(): Array<{ identifier: string; languages: Array<{ priority: number; name: string }> }>;
  synthesize(text: string, callback: (samples: Int16Array | undefined) => number): void;
}

const { default: createModule } = (await import('@echogarden/espeak-ng-emscripten' as string)) as {
  default: () => Promise<{ eSpeakNGWorker: new () => EspeakWorker }>;
};
const engine = new (await createModule()).eSpeakNGWorker();

/**
 * `set_voice` takes voice file names (`fr`, `roa/fr`), not the language names the voices declare (`fr-fr`,
 * `zh`, `es-mx`): those are looked up here, each to its voice of best (lowest) priority.
 */
const voiceByLanguage = new Map<string, { identifier: string; priority: number }>();
for (const voice of engine.list_voices()) {
  for (const language of voice.languages) {
    const name = language.name.toLowerCase();
    const known = voiceByLanguage.get(name);
    if (!known || language.priority < known.priority) {
      voiceByLanguage.set(name, { identifier: voice.identifier, priority: language.priority });
    }
  }
}

function setVoice(requested: string): boolean {
  if (engine.set_voice(requested) === 0) {
    return true;
  }
  const [language, variant] = requested.split('+');
  const voice = voiceByLanguage.get(language!.toLowerCase()); // split returns at least one part
  return voice !== undefined && engine.set_voice(variant ? `${voice.identifier}+${variant}` : voice.identifier) === 0;
}

function reply(message: EspeakReply, pcm?: Int16Array): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
  if (pcm) {
    process.stdout.write(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  }
}

function synthesize(request: EspeakRequest): void {
  if (!setVoice(request.voice)) {
    reply({ id: request.id, ok: false, message: `eSpeak NG has no voice '${request.voice}'`, badVoice: true });
    return;
  }
  engine.set_rate(request.rate);
  engine.set_pitch(request.pitch);
  engine.set_volume(100); // eSpeak's normal volume: loudness and the caller's volume are gains below
  const chunks: Int16Array[] = [];
  engine.synthesize(request.text, (samples) => {
    if (samples?.length) {
      chunks.push(samples);
    }
    return 0; // go on
  });
  const pcm = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    pcm.set(chunk, offset);
    offset += chunk.length;
  }
  // Every voice and variant at one loudness (the same as Flite's), then the caller's volume.
  const out = applyGain(pcm, request.gain * loudnessGain(pcm, engine.samplerate));
  reply({ id: request.id, ok: true, sampleRate: engine.samplerate, byteLength: out.byteLength }, out);
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  pending += chunk;
  for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    let request: EspeakRequest | undefined;
    try {
      request = JSON.parse(line) as EspeakRequest;
      synthesize(request);
    } catch (error) {
      reply({
        id: request?.id ?? -1,
        ok: false,
        message: error instanceof Error ? error.message : String(error),
        badVoice: false,
      });
    }
  }
});
// The server closing our stdin is the signal to go.
process.stdin.on('end', () => process.exit(0));
reply({ id: 0, ok: true, sampleRate: engine.samplerate, byteLength: 0 });
