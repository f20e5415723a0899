/**
 * The JSON answers of speech and music, in the two shapes they go out in: `POST /v1/music/generations`'s body
 * (a link or base64, with the duration) and the `text_to_speech` / `generate_music` tools' output (MCP and REST
 * alike). Made here, from what was generated, for the route and the tools.
 */
import type { GeneratedMedia } from '../../core/models.js';

/** `POST /v1/music/generations` when JSON was asked for: one item, its link or its base64 MP3. */
export function encodeMusicResponse(audio: GeneratedMedia, seconds: number, created: number, url?: string) {
  const item =
    url !== undefined
      ? { url, duration: seconds, format: 'mp3' as const }
      : { b64_json: Buffer.from(audio.data).toString('base64'), duration: seconds, format: 'mp3' as const };
  return { created: Math.floor(created / 1000), data: [item] };
}

/** The `generate_music` tool's output and text. */
export function encodeMusicToolAnswer(music: { model: string; audio: GeneratedMedia; seconds: number }, url: string) {
  return {
    output: { model: music.model, media_type: music.audio.mediaType, url, seconds: music.seconds },
    text: `Composed ${music.seconds.toFixed(1)} s of music with ${music.model}: ${url}`,
  };
}

/** The `text_to_speech` tool's output and text. */
export function encodeSpeechToolAnswer(
  speech: { model: string; audio: GeneratedMedia; characters: number; seconds: number },
  format: string,
  url: string,
) {
  return {
    output: {
      model: speech.model,
      media_type: speech.audio.mediaType,
      url,
      characters: speech.characters,
      seconds: speech.seconds,
    },
    text: `Spoke ${speech.characters} characters (${speech.seconds.toFixed(1)} s of ${format.toUpperCase()}) with ${speech.model}: ${url}`,
  };
}
