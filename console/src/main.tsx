/**
 * The console's shell: sign-in, the navigation and the hash router (`/console#/chat`): the server serves one
 * page, and the key never travels in a path or query.
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { callJson, describe, forgetModels } from './api.ts';
import { AudioPage } from './pages/audio.tsx';
import { ChatPage } from './pages/chat.tsx';
import { DeploymentsPage } from './pages/deployments.tsx';
import { FilesPage } from './pages/files.tsx';
import { ImagesPage } from './pages/images.tsx';
import { KeysPage } from './pages/keys.tsx';
import { McpPage } from './pages/mcp.tsx';
import { SearchPage } from './pages/search.tsx';
import { UsagePage } from './pages/usage.tsx';
import { VideoPage } from './pages/video.tsx';
import { adminKey, apiKey, signIn, signOut } from './session.ts';
import { useSignal } from './signal.ts';
import { ErrorLine, Field } from './ui.tsx';
import './style.css';

const PAGES = {
  chat: { label: 'Chat', view: ChatPage, admin: false },
  images: { label: 'Images', view: ImagesPage, admin: false },
  audio: { label: 'Speech & music', view: AudioPage, admin: false },
  video: { label: 'Video', view: VideoPage, admin: false },
  files: { label: 'Files', view: FilesPage, admin: false },
  search: { label: 'Search', view: SearchPage, admin: false },
  mcp: { label: 'MCP tools', view: McpPage, admin: false },
  usage: { label: 'Usage', view: UsagePage, admin: false },
  keys: { label: 'Keys (admin)', view: KeysPage, admin: true },
  deployments: { label: 'Deployments (admin)', view: DeploymentsPage, admin: true },
} as const;
type PageName = keyof typeof PAGES;

function currentPage(): PageName {
  const name = location.hash.replace(/^#\/?/, '');
  return name in PAGES ? (name as PageName) : 'chat';
}

function SignIn() {
  const [key, setKey] = useState('');
  const [admin, setAdmin] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      if (key) {
        // Checked with a real call before it is kept: a mistyped key fails here, not on every page.
        await callJson('/v1/models', { headers: { authorization: `Bearer ${key}` } });
        forgetModels();
        signIn('api', key);
      }
      if (admin) {
        signIn('admin', admin);
      }
      if (!key && !admin) {
        setError('Enter an API key, the admin key, or both.');
      }
    } catch (failure) {
      setError(`That key was refused: ${describe(failure)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in" id="main">
      <h1>Omnigate console</h1>
      <p>
        Sign in with an API key to use the playground and see its usage, or with the admin key to manage keys. Keys stay
        in this tab's session storage and are sent only in the Authorization header to this gateway.
      </p>
      <form onSubmit={submit}>
        <Field label="API key">
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="off"
              spellcheck={false}
              value={key}
              onInput={(event) => setKey(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Admin key (optional)">
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="off"
              spellcheck={false}
              value={admin}
              onInput={(event) => setAdmin(event.currentTarget.value)}
            />
          )}
        </Field>
        <ErrorLine message={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

function App() {
  const key = useSignal(apiKey);
  const admin = useSignal(adminKey);
  const [page, setPage] = useState<PageName>(currentPage());
  const [menuOpen, setMenuOpen] = useState(false);
  const moved = useRef(false);
  // After a navigation (not the first load), focus goes to the new page's heading, as a screen reader expects.
  useEffect(() => {
    if (moved.current) {
      moved.current = false;
      document.getElementById('page-title')?.focus();
    }
  }, [page]);
  useEffect(() => {
    const follow = () => {
      setPage(currentPage());
      setMenuOpen(false);
      moved.current = true;
    };
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);

  if (!key && !admin) {
    return <SignIn />;
  }
  const entry = PAGES[page];
  const allowed = entry.admin ? Boolean(admin) : Boolean(key);
  const View = entry.view;
  return (
    <div class="shell">
      <button type="button" class="skip" onClick={() => document.getElementById('page-title')?.focus()}>
        Skip to content
      </button>
      <header>
        <span class="brand">Omnigate</span>
        <button
          type="button"
          class="menu"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="nav" aria-label="Console" class={menuOpen ? 'open' : ''}>
          <ul>
            {(Object.keys(PAGES) as PageName[]).map((name) => (
              <li key={name}>
                <a href={`#/${name}`} aria-current={name === page ? 'page' : undefined}>
                  {PAGES[name].label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        {allowed ? (
          <View />
        ) : (
          <section class="page">
            <h1 id="page-title" tabIndex={-1}>
              {entry.label}
            </h1>
            <p>
              This page needs {entry.admin ? 'the admin key' : 'an API key'}.{' '}
              <button type="button" onClick={signOut}>
                Sign in again
              </button>
            </p>
          </section>
        )}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
