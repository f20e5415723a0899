/**
 * Chat in any of the three dialects the gateway speaks, streamed token by token, with a stop button (aborting
 * the fetch closes the stream; the gateway records what was produced) and each answer's usage and request id.
 */
import { useRef, useState } from 'preact/hooks';
import { call, describe, requestIdOf } from '../api.ts';
import { readSse } from '../sse.ts';
import { ErrorLine, Field, ModelSelect, Page, RequestId } from '../ui.tsx';

type Dialect = 'chat' | 'responses' | 'messages';
interface Turn {
  role: 'user' | 'assistant';
  text: string;
  usage?: { input: number; output: number };
  requestId?: string | null;
  stopped?: boolean;
}
interface Delta {
  text?: string;
  input?: number;
  output?: number;
  error?: string;
}

const DIALECTS: Record<Dialect, { label: string; path: string }> = {
  chat: { label: 'Chat Completions (/v1/chat/completions)', path: '/v1/chat/completions' },
  responses: { label: 'Responses (/v1/responses)', path: '/v1/responses' },
  messages: { label: 'Anthropic Messages (/anthropic/v1/messages)', path: '/anthropic/v1/messages' },
};

function requestBody(dialect: Dialect, model: string, turns: Turn[]): unknown {
  const messages = turns.map((turn) => ({ role: turn.role, content: turn.text }));
  if (dialect === 'chat') {
    return { model, messages, stream: true, stream_options: { include_usage: true } };
  }
  if (dialect === 'responses') {
    return { model, input: messages, stream: true, store: false };
  }
  return { model, messages, max_tokens: 1024, stream: true };
}

/** One event of the dialect's stream, as text and usage. */
function decode(dialect: Dialect, event: string, data: string): Delta {
  if (data === '[DONE]') {
    return {};
  }
  const json = JSON.parse(data);
  if (json.error) {
    return { error: json.error.message ?? String(json.error) };
  }
  if (dialect === 'chat') {
    return {
      text: json.choices?.[0]?.delta?.content ?? undefined,
      input: json.usage?.prompt_tokens,
      output: json.usage?.completion_tokens,
    };
  }
  if (dialect === 'responses') {
    if (json.type === 'response.output_text.delta') {
      return { text: json.delta };
    }
    const usage = json.response?.usage;
    return usage ? { input: usage.input_tokens, output: usage.output_tokens } : {};
  }
  if (event === 'content_block_delta' && json.delta?.type === 'text_delta') {
    return { text: json.delta.text };
  }
  if (event === 'message_start') {
    return { input: json.message?.usage?.input_tokens };
  }
  if (event === 'message_delta') {
    return { output: json.usage?.output_tokens };
  }
  return {};
}

export function ChatPage() {
  const [model, setModel] = useState('');
  const [dialect, setDialect] = useState<Dialect>('chat');
  const [prompt, setPrompt] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const controller = useRef<AbortController | null>(null);

  async function send(event: Event) {
    event.preventDefault();
    if (!prompt.trim() || busy) {
      return;
    }
    const history: Turn[] = [...turns, { role: 'user', text: prompt }];
    const answer: Turn = { role: 'assistant', text: '' };
    setTurns([...history, answer]);
    setPrompt('');
    setError(null);
    setBusy(true);
    const abort = new AbortController();
    controller.current = abort;
    const update = () => setTurns([...history, { ...answer }]);
    try {
      const response = await call(DIALECTS[dialect].path, {
        body: requestBody(dialect, model, history),
        headers: dialect === 'messages' ? { 'anthropic-version': '2023-06-01' } : {},
        signal: abort.signal,
      });
      answer.requestId = requestIdOf(response);
      update();
      for await (const part of readSse(response.body!)) {
        const delta = decode(dialect, part.event, part.data);
        if (delta.error) {
          throw new Error(delta.error);
        }
        if (delta.text) {
          answer.text += delta.text;
        }
        if (delta.input !== undefined || delta.output !== undefined) {
          answer.usage = {
            input: delta.input ?? answer.usage?.input ?? 0,
            output: delta.output ?? answer.usage?.output ?? 0,
          };
        }
        update();
      }
    } catch (failure) {
      if (abort.signal.aborted) {
        answer.stopped = true;
        update();
      } else {
        setError(describe(failure));
      }
    } finally {
      controller.current = null;
      setBusy(false);
    }
  }

  return (
    <Page title="Chat">
      <div class="row">
        <ModelSelect type="chat" value={model} onChange={setModel} />
        <Field label="Dialect">
          {(id) => (
            <select id={id} value={dialect} onChange={(event) => setDialect(event.currentTarget.value as Dialect)}>
              {Object.entries(DIALECTS).map(([value, { label }]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ol class="transcript" aria-live="polite">
        {turns.map((turn, index) => (
          <li key={index} class={`turn ${turn.role}`}>
            <strong>{turn.role === 'user' ? 'You' : 'Model'}</strong>
            <p class="turn-text" data-testid={turn.role === 'assistant' ? 'answer' : undefined}>
              {turn.text}
            </p>
            {turn.role === 'assistant' ? (
              <p class="meta">
                {turn.stopped ? <span data-testid="stopped">stopped · </span> : null}
                {turn.usage ? (
                  <span data-testid="usage">
                    {turn.usage.input} in · {turn.usage.output} out ·{' '}
                  </span>
                ) : null}
                <RequestId id={turn.requestId ?? null} />
              </p>
            ) : null}
          </li>
        ))}
      </ol>
      <ErrorLine message={error} />
      <form class="composer" onSubmit={send}>
        <Field label="Message">
          {(id) => (
            <textarea
              id={id}
              rows={3}
              value={prompt}
              onInput={(event) => setPrompt(event.currentTarget.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
                  send(event);
                }
              }}
            />
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={busy || !model}>
            Send
          </button>
          <button type="button" disabled={!busy} onClick={() => controller.current?.abort()}>
            Stop
          </button>
          <button type="button" disabled={busy} onClick={() => setTurns([])}>
            Clear
          </button>
        </div>
      </form>
    </Page>
  );
}
