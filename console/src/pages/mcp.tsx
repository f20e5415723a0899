/**
 * MCP over the gateway's stateless Streamable HTTP endpoint: tools/list, a form generated from the chosen tool's
 * input schema, tools/call, and its content rendered (text, images, audio, links).
 */
import { useEffect, useState } from 'preact/hooks';
import { call, describe, requestIdOf } from '../api.ts';
import { ErrorLine, Field, Page, RequestId } from '../ui.tsx';

interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}
interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
}
interface Content {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
}

let nextId = 1;
async function rpc<T>(method: string, params: unknown): Promise<{ result: T; requestId: string | null }> {
  const response = await call('/v1/mcp', {
    body: { jsonrpc: '2.0', id: nextId++, method, params },
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
  });
  const text = await response.text();
  // A JSON answer, or an SSE stream whose last `data:` line is the JSON-RPC response.
  const json = response.headers.get('content-type')?.includes('text/event-stream')
    ? (text.match(/^data: ?(.*)$/gm) ?? []).map((line) => line.replace(/^data: ?/, '')).pop()
    : text;
  const message = JSON.parse(json ?? 'null') as { result?: T; error?: { message: string } };
  if (message?.error) {
    throw new Error(message.error.message);
  }
  return { result: message.result as T, requestId: requestIdOf(response) };
}

function typeOf(schema: JsonSchema): string {
  const type = Array.isArray(schema.type) ? schema.type.find((value) => value !== 'null') : schema.type;
  return type ?? 'json';
}

/** The form's text for each argument, turned into the JSON value the schema asks for. */
function argumentsOf(schema: JsonSchema, values: Record<string, string | boolean>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = values[name];
    if (value === undefined || value === '') {
      continue;
    }
    const type = typeOf(property);
    if (type === 'boolean') {
      result[name] = value === true;
    } else if (type === 'number' || type === 'integer') {
      result[name] = Number(value);
    } else if (type === 'string') {
      result[name] = value;
    } else {
      result[name] = JSON.parse(String(value));
    }
  }
  return result;
}

function ArgumentField(props: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: string | boolean | undefined;
  onChange: (value: string | boolean) => void;
}) {
  const { schema } = props;
  const type = typeOf(schema);
  const label = `${props.name}${props.required ? ' (required)' : ''}`;
  return (
    <Field label={label} hint={schema.description}>
      {(id) =>
        schema.enum ? (
          <select
            id={id}
            value={String(props.value ?? '')}
            onChange={(event) => props.onChange(event.currentTarget.value)}
          >
            <option value="">—</option>
            {schema.enum.map((option) => (
              <option key={String(option)}>{String(option)}</option>
            ))}
          </select>
        ) : type === 'boolean' ? (
          <input
            id={id}
            type="checkbox"
            checked={props.value === true}
            onChange={(event) => props.onChange(event.currentTarget.checked)}
          />
        ) : type === 'number' || type === 'integer' ? (
          <input
            id={id}
            type="number"
            min={schema.minimum}
            max={schema.maximum}
            step={type === 'integer' ? 1 : 'any'}
            required={props.required}
            value={String(props.value ?? '')}
            onInput={(event) => props.onChange(event.currentTarget.value)}
          />
        ) : (
          <textarea
            id={id}
            rows={type === 'string' ? 2 : 4}
            required={props.required}
            placeholder={type === 'string' ? undefined : `JSON (${type})`}
            value={String(props.value ?? '')}
            onInput={(event) => props.onChange(event.currentTarget.value)}
          />
        )
      }
    </Field>
  );
}

function ContentView(props: { item: Content }) {
  const { item } = props;
  if (item.type === 'image' && item.data) {
    return (
      <img src={`data:${item.mimeType};base64,${item.data}`} alt="Returned by the tool" data-testid="tool-image" />
    );
  }
  if (item.type === 'audio' && item.data) {
    // biome-ignore lint/a11y/useMediaCaption: generated audio has no caption track
    return <audio controls src={`data:${item.mimeType};base64,${item.data}`} aria-label="Audio returned by the tool" />;
  }
  if (item.type === 'resource_link' && item.uri) {
    return (
      <p>
        Resource: {item.name ?? item.uri} <code>{item.uri}</code>
      </p>
    );
  }
  return <pre class="tool-text">{item.text ?? JSON.stringify(item, null, 2)}</pre>;
}

export function McpPage() {
  const [tools, setTools] = useState<Tool[]>([]);
  const [selected, setSelected] = useState<string>('');
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [result, setResult] = useState<{ content: Content[]; isError?: boolean } | null>(null);
  const [requestId, setRequestId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    rpc<{ tools: Tool[] }>('tools/list', {}).then(
      ({ result }) => {
        setTools(result.tools);
        setSelected(result.tools[0]?.name ?? '');
      },
      (failure) => setError(describe(failure)),
    );
  }, []);

  const tool = tools.find((candidate) => candidate.name === selected);
  async function run(event: Event) {
    event.preventDefault();
    if (!tool) {
      return;
    }
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const answer = await rpc<{ content: Content[]; isError?: boolean }>('tools/call', {
        name: tool.name,
        arguments: argumentsOf(tool.inputSchema, values),
      });
      setResult(answer.result);
      setRequestId(answer.requestId);
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Page title="MCP tools">
      <Field label="Tool">
        {(id) => (
          <select
            id={id}
            value={selected}
            onChange={(event) => {
              setSelected(event.currentTarget.value);
              setValues({});
              setResult(null);
            }}
          >
            {tools.map((candidate) => (
              <option key={candidate.name} value={candidate.name}>
                {candidate.title ?? candidate.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      {tool ? (
        <form onSubmit={run} data-testid="tool-form">
          <p>{tool.description}</p>
          {Object.entries(tool.inputSchema.properties ?? {}).map(([name, schema]) => (
            <ArgumentField
              key={`${tool.name}.${name}`}
              name={name}
              schema={schema}
              required={tool.inputSchema.required?.includes(name) ?? false}
              value={values[name]}
              onChange={(value) => setValues({ ...values, [name]: value })}
            />
          ))}
          <button type="submit" disabled={busy}>
            {busy ? 'Calling…' : `Call ${tool.name}`}
          </button>
        </form>
      ) : null}
      <ErrorLine message={error} />
      {result ? (
        <div class={`tool-result${result.isError ? ' failed' : ''}`} data-testid="tool-result">
          {result.isError ? <p role="alert">The tool reported an error.</p> : null}
          {result.content.map((item, index) => (
            <ContentView key={index} item={item} />
          ))}
          <RequestId id={requestId} />
        </div>
      ) : null}
    </Page>
  );
}
