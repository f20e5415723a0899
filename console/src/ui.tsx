/** Small shared pieces: a labelled field (a select of choices, a text area), the model picker of one model type, the error line, a status line. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describe, listModels, type ModelInfo } from './api.ts';

let fieldCount = 0;
export function useId(prefix: string): string {
  const [id] = useState(() => `${prefix}-${++fieldCount}`);
  return id;
}

export function Field(props: { label: string; children: (id: string) => ComponentChildren; hint?: string }) {
  const id = useId('field');
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id)}
      {props.hint ? <small>{props.hint}</small> : null}
    </div>
  );
}

/** A labelled select of fixed choices; a choice is its value, or a value with the text shown for it. */
export function ChoiceField(props: {
  label: string;
  value: string;
  choices: ReadonlyArray<string | { value: string; text: string }>;
  onChange: (value: string) => void;
  disabled?: boolean;
}) {
  return (
    <Field label={props.label}>
      {(id) => (
        <select
          id={id}
          value={props.value}
          disabled={props.disabled}
          onChange={(event) => props.onChange(event.currentTarget.value)}
        >
          {props.choices.map((choice) =>
            typeof choice === 'string' ? (
              <option key={choice}>{choice}</option>
            ) : (
              <option key={choice.value} value={choice.value}>
                {choice.text}
              </option>
            ),
          )}
        </select>
      )}
    </Field>
  );
}

/** A labelled text area: a prompt, or the text to speak. */
export function TextField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  rows?: number;
  required?: boolean;
}) {
  return (
    <Field label={props.label}>
      {(id) => (
        <textarea
          id={id}
          rows={props.rows ?? 2}
          required={props.required}
          value={props.value}
          onInput={(event) => props.onChange(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

export function useModels(type: string): { models: ModelInfo[]; error: string | null } {
  const [models, setModels] = useState<ModelInfo[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    listModels().then(
      (all) => setModels(all.filter((model) => model.type === type)),
      (failure) => setError(describe(failure)),
    );
  }, [type]);
  return { models, error };
}

export function ModelSelect(props: { type: string; value: string; onChange: (id: string) => void; label?: string }) {
  const { models, error } = useModels(props.type);
  useEffect(() => {
    const [first] = models;
    if (!props.value && first !== undefined) {
      props.onChange(first.id);
    }
  }, [models]);
  return (
    <Field label={props.label ?? 'Model'}>
      {(id) => (
        <>
          <select
            id={id}
            name="model"
            value={props.value}
            onChange={(event) => props.onChange(event.currentTarget.value)}
          >
            {models.map((model) => (
              <option key={model.id} value={model.id}>
                {model.id}
              </option>
            ))}
          </select>
          {error ? <ErrorLine message={error} /> : null}
        </>
      )}
    </Field>
  );
}

export function ErrorLine(props: { message: string | null }) {
  return props.message ? (
    <p class="error" role="alert">
      {props.message}
    </p>
  ) : null;
}

export function Page(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {props.title}
      </h1>
      {props.children}
    </section>
  );
}

export function RequestId(props: { id: string | null }) {
  return props.id ? (
    <span class="request-id">
      request <code data-testid="request-id">{props.id}</code>
    </span>
  ) : null;
}
