/**
 * Admin: API keys (list, create with the secret shown once and a copy button, revoke, limits) through
 * `/admin/v1/keys` with the admin key. A gateway without that API answers 404, said plainly here.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, callJson, describe } from '../api.ts';
import { adminKey } from '../session.ts';
import { useSignal } from '../signal.ts';
import { ErrorLine, Field, Page } from '../ui.tsx';

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  allowed_models?: string[];
  project?: string | null;
  limits?: Record<string, unknown> | null;
  created_at: number;
  revoked_at: number | null;
}

/** Only the limits that are set: a key without any reads as "none". */
function limitsInForce(limits: Record<string, unknown> | null | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(limits ?? {}).filter(([, value]) => value !== null && value !== undefined));
}

function describeLimits(limits: Record<string, unknown> | null | undefined): string {
  const entries = Object.entries(limitsInForce(limits));
  return entries.length > 0 ? entries.map(([name, value]) => `${name} ${value}`).join(', ') : 'none';
}

export function KeysPage() {
  const admin = useSignal(adminKey);
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [models, setModels] = useState('');
  const [limits, setLimits] = useState('');
  const [created, setCreated] = useState<{ id: string; key: string } | null>(null);
  const [copied, setCopied] = useState(false);

  async function refresh() {
    try {
      setKeys((await callJson<{ data: ApiKey[] }>('/admin/v1/keys', { admin: true })).data);
      setMissing(false);
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.status === 404) {
        setMissing(true);
      } else if (failure instanceof ApiFailure && failure.status === 401) {
        setError(
          `The admin key was refused (${describe(failure)}). Check OMNIGATE_ADMIN_KEY; a gateway without the key administration API refuses it too.`,
        );
      } else {
        setError(describe(failure));
      }
    }
  }
  useEffect(() => {
    if (admin) {
      refresh();
    }
  }, [admin]);

  async function create(event: Event) {
    event.preventDefault();
    setError(null);
    setCopied(false);
    try {
      const body: Record<string, unknown> = { name };
      const allowed = models
        .split(',')
        .map((model) => model.trim())
        .filter(Boolean);
      if (allowed.length > 0) {
        body.allowed_models = allowed;
      }
      if (limits.trim()) {
        body.limits = JSON.parse(limits);
      }
      const key = await callJson<ApiKey & { key: string }>('/admin/v1/keys', { admin: true, body });
      setCreated({ id: key.id, key: key.key });
      setName('');
      await refresh();
    } catch (failure) {
      setError(describe(failure));
    }
  }

  async function editLimits(key: ApiKey) {
    const current = JSON.stringify(limitsInForce(key.limits));
    const answer = window.prompt(`Limits of ${key.name || key.id} as JSON (null clears one):`, current);
    if (answer === null) {
      return;
    }
    try {
      await callJson(`/admin/v1/keys/${encodeURIComponent(key.id)}`, {
        admin: true,
        method: 'PATCH',
        body: { limits: JSON.parse(answer) },
      });
      await refresh();
    } catch (failure) {
      setError(describe(failure));
    }
  }

  async function revoke(key: ApiKey) {
    if (!window.confirm(`Revoke ${key.name || key.id}? Calls with it will fail at once.`)) {
      return;
    }
    try {
      await callJson(`/admin/v1/keys/${encodeURIComponent(key.id)}`, { admin: true, method: 'DELETE' });
      await refresh();
    } catch (failure) {
      setError(describe(failure));
    }
  }

  if (!admin) {
    return (
      <Page title="API keys">
        <p>Sign in with the admin key (OMNIGATE_ADMIN_KEY) to manage keys.</p>
      </Page>
    );
  }
  if (missing) {
    return (
      <Page title="API keys">
        <p role="status" data-testid="admin-missing">
          This gateway has no key administration API (<code>/admin/v1/keys</code> answered 404). Manage keys with{' '}
          <code>omnigate keys</code> on the server instead.
        </p>
      </Page>
    );
  }
  return (
    <Page title="API keys">
      <ErrorLine message={error} />
      <form onSubmit={create}>
        <h2>Create a key</h2>
        <div class="row">
          <Field label="Name">
            {(id) => <input id={id} required value={name} onInput={(event) => setName(event.currentTarget.value)} />}
          </Field>
          <Field label="Allowed models (comma-separated, empty: all)">
            {(id) => <input id={id} value={models} onInput={(event) => setModels(event.currentTarget.value)} />}
          </Field>
          <Field label="Limits (JSON, optional)">
            {(id) => (
              <input
                id={id}
                value={limits}
                placeholder='{"rpm": 60, "budget_usd": 5}'
                onInput={(event) => setLimits(event.currentTarget.value)}
              />
            )}
          </Field>
        </div>
        <button type="submit">Create key</button>
      </form>
      {created ? (
        <div class="secret" role="status">
          <p>
            The secret of <code>{created.id}</code>, shown this once:
          </p>
          <code data-testid="new-secret">{created.key}</code>{' '}
          <button
            type="button"
            onClick={() =>
              navigator.clipboard.writeText(created.key).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            {copied ? 'Copied' : 'Copy'}
          </button>{' '}
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      ) : null}
      <div class="table-wrap">
        <table class="table" data-testid="key-list">
          <caption>Keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Prefix</th>
              <th scope="col">Models</th>
              <th scope="col">Limits</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.id}</code>
                </td>
                <td>
                  <code>{key.prefix}</code>
                </td>
                <td>{key.allowed_models?.length ? key.allowed_models.join(', ') : 'all'}</td>
                <td>{describeLimits(key.limits)}</td>
                <td>{key.revoked_at ? `revoked ${new Date(key.revoked_at * 1000).toLocaleDateString()}` : 'active'}</td>
                <td>
                  {key.revoked_at ? null : (
                    <span class="actions">
                      <button
                        type="button"
                        onClick={() => editLimits(key)}
                        aria-label={`Set limits of ${key.name || key.id}`}
                      >
                        Limits
                      </button>
                      <button type="button" onClick={() => revoke(key)} aria-label={`Revoke ${key.name || key.id}`}>
                        Revoke
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
