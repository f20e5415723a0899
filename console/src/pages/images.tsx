/** Image generation: prompt, size or aspect ratio, n; the answer as a gallery, each image with a download link. */
import { useState } from 'preact/hooks';
import { call, describe, requestIdOf } from '../api.ts';
import { ChoiceField, ErrorLine, Field, ModelSelect, Page, RequestId, TextField } from '../ui.tsx';

const SIZES = ['auto', '256x256', '512x512', '1024x1024', '1536x1024', '1024x1536'];
const RATIOS = ['', '1:1', '16:9', '4:3', '3:2', '2:3', '3:4', '9:16', '21:9'];

export function ImagesPage() {
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('');
  const [size, setSize] = useState('512x512');
  const [ratio, setRatio] = useState('');
  const [count, setCount] = useState(1);
  const [images, setImages] = useState<string[]>([]);
  const [requestId, setRequestId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function generate(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = { model, prompt, n: count, response_format: 'b64_json' };
      if (ratio) {
        body.aspect_ratio = ratio;
      } else {
        body.size = size;
      }
      const response = await call('/v1/images/generations', { body });
      setRequestId(requestIdOf(response));
      const answer = (await response.json()) as {
        data: Array<{ b64_json?: string; url?: string }>;
        output_format?: string;
      };
      const type = `image/${answer.output_format ?? 'png'}`;
      setImages(answer.data.map((image) => image.url ?? `data:${type};base64,${image.b64_json}`));
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Page title="Images">
      <form onSubmit={generate}>
        <div class="row">
          <ModelSelect type="image" value={model} onChange={setModel} />
          <ChoiceField label="Size" value={size} choices={SIZES} disabled={ratio !== ''} onChange={setSize} />
          <ChoiceField
            label="Aspect ratio (instead of size)"
            value={ratio}
            choices={RATIOS.map((value) => ({ value, text: value || 'none' }))}
            onChange={setRatio}
          />
          <Field label="Count (n)">
            {(id) => (
              <input
                id={id}
                type="number"
                min={1}
                max={10}
                value={count}
                onInput={(event) => setCount(Number(event.currentTarget.value) || 1)}
              />
            )}
          </Field>
        </div>
        <TextField label="Prompt" required value={prompt} onChange={setPrompt} />
        <button type="submit" disabled={busy || !model}>
          {busy ? 'Generating…' : 'Generate'}
        </button>
      </form>
      <ErrorLine message={error} />
      <RequestId id={requestId} />
      <ul class="gallery">
        {images.map((source, index) => (
          <li key={source}>
            <img src={source} alt={`Generated ${index + 1} of ${images.length}: ${prompt}`} />
            <a href={source} download={`image-${index + 1}.png`}>
              Download image {index + 1}
            </a>
          </li>
        ))}
      </ul>
    </Page>
  );
}
