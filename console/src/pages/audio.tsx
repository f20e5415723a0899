/** Speech (voice, speed, format) and music, each answered as audio bytes played in an audio element. */
import { useState } from 'preact/hooks';
import { call, describe, requestIdOf } from '../api.ts';
import { ChoiceField, ErrorLine, Field, ModelSelect, Page, RequestId, TextField } from '../ui.tsx';

const VOICES = ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'];
const SPEECH_FORMATS = ['mp3', 'wav', 'opus', 'aac', 'flac'];

interface Clip {
  url: string;
  requestId: string | null;
  type: string;
}

async function fetchClip(path: string, body: unknown): Promise<Clip> {
  const response = await call(path, { body });
  const blob = await response.blob();
  return { url: URL.createObjectURL(blob), requestId: requestIdOf(response), type: blob.type };
}

function Player(props: { clip: Clip | null; label: string; testId: string }) {
  return props.clip ? (
    <div class="player">
      {/* biome-ignore lint/a11y/useMediaCaption: generated audio has no caption track */}
      <audio controls src={props.clip.url} aria-label={props.label} data-testid={props.testId} />
      <a href={props.clip.url} download={`${props.testId}.${props.clip.type.split('/')[1] ?? 'bin'}`}>
        Download
      </a>{' '}
      <RequestId id={props.clip.requestId} />
    </div>
  ) : null;
}

export function AudioPage() {
  const [speechModel, setSpeechModel] = useState('');
  const [text, setText] = useState('');
  const [voice, setVoice] = useState('alloy');
  const [speed, setSpeed] = useState(1);
  const [format, setFormat] = useState('mp3');
  const [speech, setSpeech] = useState<Clip | null>(null);
  const [musicModel, setMusicModel] = useState('');
  const [musicPrompt, setMusicPrompt] = useState('');
  const [seconds, setSeconds] = useState(8);
  const [music, setMusic] = useState<Clip | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<'speech' | 'music' | null>(null);

  async function run(kind: 'speech' | 'music', event: Event) {
    event.preventDefault();
    setBusy(kind);
    setError(null);
    try {
      if (kind === 'speech') {
        setSpeech(
          await fetchClip('/v1/audio/speech', {
            model: speechModel,
            input: text,
            voice,
            speed,
            response_format: format,
          }),
        );
      } else {
        setMusic(
          await fetchClip('/v1/music/generations', {
            model: musicModel,
            prompt: musicPrompt,
            duration: seconds,
            response_format: 'mp3',
          }),
        );
      }
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setBusy(null);
    }
  }

  return (
    <Page title="Speech and music">
      <ErrorLine message={error} />
      <form onSubmit={(event) => run('speech', event)} aria-labelledby="speech-title">
        <h2 id="speech-title">Speech</h2>
        <div class="row">
          <ModelSelect type="speech" value={speechModel} onChange={setSpeechModel} label="Speech model" />
          <ChoiceField label="Voice" value={voice} choices={VOICES} onChange={setVoice} />
          <Field label="Speed">
            {(id) => (
              <input
                id={id}
                type="number"
                min={0.25}
                max={4}
                step={0.25}
                value={speed}
                onInput={(event) => setSpeed(Number(event.currentTarget.value) || 1)}
              />
            )}
          </Field>
          <ChoiceField label="Format" value={format} choices={SPEECH_FORMATS} onChange={setFormat} />
        </div>
        <TextField label="Text to speak" required value={text} onChange={setText} />
        <button type="submit" disabled={busy !== null || !speechModel}>
          {busy === 'speech' ? 'Speaking…' : 'Speak'}
        </button>
        <Player clip={speech} label="Synthesized speech" testId="speech" />
      </form>
      <form onSubmit={(event) => run('music', event)} aria-labelledby="music-title">
        <h2 id="music-title">Music</h2>
        <div class="row">
          <ModelSelect type="music" value={musicModel} onChange={setMusicModel} label="Music model" />
          <Field label="Duration (seconds)">
            {(id) => (
              <input
                id={id}
                type="number"
                min={1}
                max={300}
                value={seconds}
                onInput={(event) => setSeconds(Number(event.currentTarget.value) || 8)}
              />
            )}
          </Field>
        </div>
        <TextField label="Music prompt" value={musicPrompt} onChange={setMusicPrompt} />
        <button type="submit" disabled={busy !== null || !musicModel}>
          {busy === 'music' ? 'Composing…' : 'Compose'}
        </button>
        <Player clip={music} label="Generated music" testId="music" />
      </form>
    </Page>
  );
}
