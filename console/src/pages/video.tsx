/**
 * Video: create a task, follow its progress (GET /v1/videos/{id}, polled) on a progress bar, then play the MP4
 * and show the thumbnail, both fetched with the key (the content endpoint needs it) as object URLs.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { callBlobUrl, callJson, call, describe, requestIdOf } from '../api.ts';
import { ChoiceField, ErrorLine, ModelSelect, Page, RequestId, TextField } from '../ui.tsx';

interface Video {
  id: string;
  status: 'queued' | 'processing' | 'completed' | 'failed';
  progress: number;
  error: { message: string } | null;
}

const POLL_MS = 400;

export function VideoPage() {
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('');
  const [seconds, setSeconds] = useState('4');
  const [size, setSize] = useState('720x1280');
  const [video, setVideo] = useState<Video | null>(null);
  const [requestId, setRequestId] = useState<string | null>(null);
  const [player, setPlayer] = useState<{ video: string; thumbnail: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const stopped = useRef(false);
  useEffect(
    () => () => {
      stopped.current = true;
    },
    [],
  );

  async function create(event: Event) {
    event.preventDefault();
    setError(null);
    setPlayer(null);
    try {
      const response = await call('/v1/videos', { body: { model, prompt, seconds, size } });
      setRequestId(requestIdOf(response));
      let current = (await response.json()) as Video;
      setVideo(current);
      while (current.status === 'queued' || current.status === 'processing') {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        if (stopped.current) {
          return;
        }
        current = await callJson<Video>(`/v1/videos/${encodeURIComponent(current.id)}`);
        setVideo(current);
      }
      if (current.status === 'failed') {
        setError(current.error?.message ?? 'The video failed.');
        return;
      }
      const base = `/v1/videos/${encodeURIComponent(current.id)}/content`;
      const [file, thumbnail] = await Promise.all([callBlobUrl(base), callBlobUrl(`${base}?variant=thumbnail`)]);
      setPlayer({ video: file, thumbnail });
    } catch (failure) {
      setError(describe(failure));
    }
  }

  const busy = video !== null && (video.status === 'queued' || video.status === 'processing');
  return (
    <Page title="Video">
      <form onSubmit={create}>
        <div class="row">
          <ModelSelect type="video" value={model} onChange={setModel} />
          <ChoiceField label="Seconds" value={seconds} choices={['4', '8', '12']} onChange={setSeconds} />
          <ChoiceField
            label="Size"
            value={size}
            choices={['720x1280', '1280x720', '1024x1792', '1792x1024']}
            onChange={setSize}
          />
        </div>
        <TextField label="Prompt" required value={prompt} onChange={setPrompt} />
        <button type="submit" disabled={busy || !model}>
          Create video
        </button>
      </form>
      <ErrorLine message={error} />
      {video ? (
        <div class="video-status">
          <label for="video-progress">
            {video.id}: {video.status} ({video.progress}%)
          </label>
          <progress id="video-progress" max={100} value={video.progress} data-testid="video-progress" />
          <RequestId id={requestId} />
        </div>
      ) : null}
      {player ? (
        <div class="video-result">
          {/* biome-ignore lint/a11y/useMediaCaption: generated video has no caption track */}
          <video
            controls
            src={player.video}
            poster={player.thumbnail}
            data-testid="video-player"
            aria-label="Generated video"
          />
          <img class="thumbnail" src={player.thumbnail} alt="Thumbnail: the video's first frame" />
          <a href={player.video} download={`${video?.id ?? 'video'}.mp4`}>
            Download MP4
          </a>
        </div>
      ) : null}
    </Page>
  );
}
