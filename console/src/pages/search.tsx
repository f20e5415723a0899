/**
 * Search (POST /v1/web/search) and search answers (POST /v1/search/answer): the answer's `[n]` markers and its
 * citation list open the cited passage in a dialog; a passage from an uploaded file can open the file itself.
 */
import { useRef, useState } from 'preact/hooks';
import { call, callBlobUrl, describe, requestIdOf } from '../api.ts';
import { ErrorLine, Field, Page, RequestId } from '../ui.tsx';

interface Source {
  index?: number;
  title: string;
  url: string;
  snippet: string;
}

function AnswerText(props: { text: string; open: (index: number) => void }) {
  const parts = props.text.split(/(\[\d+\])/);
  return (
    <p data-testid="search-answer">
      {parts.map((part, position) => {
        const marker = /^\[(\d+)\]$/.exec(part);
        return marker ? (
          <button
            key={position}
            type="button"
            class="marker"
            aria-label={`Open source ${marker[1]}`}
            onClick={() => props.open(Number(marker[1]))}
          >
            {part}
          </button>
        ) : (
          part
        );
      })}
    </p>
  );
}

export function SearchPage() {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<'answer' | 'search'>('answer');
  const [answer, setAnswer] = useState<string | null>(null);
  const [sources, setSources] = useState<Source[]>([]);
  const [requestId, setRequestId] = useState<string | null>(null);
  const [opened, setOpened] = useState<Source | null>(null);
  const [fileUrl, setFileUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);

  async function run(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const response = await call(mode === 'answer' ? '/v1/search/answer' : '/v1/web/search', { body: { query } });
      setRequestId(requestIdOf(response));
      const body = await response.json();
      if (mode === 'answer') {
        setAnswer(body.answer);
        setSources(body.citations);
      } else {
        setAnswer(null);
        setSources(body.results);
      }
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setBusy(false);
    }
  }

  function open(source: Source | undefined) {
    if (!source) {
      return;
    }
    setOpened(source);
    setFileUrl(null);
    dialog.current?.showModal();
  }

  async function openFile(source: Source) {
    try {
      setFileUrl(await callBlobUrl(new URL(source.url, location.href).pathname));
    } catch (failure) {
      setError(describe(failure));
    }
  }

  // A passage from an uploaded file cites the file's content on this gateway (absolute or relative URL).
  const local = (source: Source) => {
    const url = new URL(source.url, location.href);
    return url.origin === location.origin && url.pathname.startsWith('/v1/files/');
  };
  return (
    <Page title="Search">
      <form onSubmit={run} class="row">
        <Field label="Query">
          {(id) => (
            <input
              id={id}
              type="search"
              required
              value={query}
              onInput={(event) => setQuery(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Mode">
          {(id) => (
            <select
              id={id}
              value={mode}
              onChange={(event) => setMode(event.currentTarget.value as 'answer' | 'search')}
            >
              <option value="answer">Answer with citations</option>
              <option value="search">Search results</option>
            </select>
          )}
        </Field>
        <button type="submit" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      <ErrorLine message={error} />
      <RequestId id={requestId} />
      {answer !== null ? (
        <AnswerText text={answer} open={(index) => open(sources.find((source) => source.index === index))} />
      ) : null}
      <ol class="sources" data-testid="sources">
        {sources.map((source, position) => (
          <li key={`${source.url}-${position}`}>
            <button type="button" class="link" onClick={() => open(source)}>
              {source.index ? `[${source.index}] ` : ''}
              {source.title || source.url}
            </button>
            <small> {source.url}</small>
          </li>
        ))}
      </ol>
      <dialog ref={dialog} aria-labelledby="passage-title" data-testid="passage" onClose={() => setOpened(null)}>
        {opened ? (
          <>
            <h2 id="passage-title">{opened.title || opened.url}</h2>
            <blockquote data-testid="passage-text">{opened.snippet}</blockquote>
            {local(opened) ? (
              fileUrl ? (
                <a href={fileUrl} target="_blank" rel="noopener">
                  Open the file
                </a>
              ) : (
                <button type="button" onClick={() => openFile(opened)}>
                  Load the file
                </button>
              )
            ) : (
              <a href={opened.url} target="_blank" rel="noopener noreferrer">
                Open the source
              </a>
            )}
            <button type="button" onClick={() => dialog.current?.close()}>
              Close
            </button>
          </>
        ) : null}
      </dialog>
    </Page>
  );
}
