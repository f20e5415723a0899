import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../storage/database.js';
import { createKeyStore } from '../storage/key-store.js';
import { loadPepper } from '../storage/pepper.js';
import { runKeysCommand } from './keys.js';

let config: Readonly<Config>;

function run(...argv: string[]): { code: number; lines: string[] } {
  const lines: string[] = [];
  const code = runKeysCommand(argv, config, (line) => lines.push(line));
  return { code, lines };
}

/** Opens the data directory as the server does. */
function withStore<T>(use: (keys: ReturnType<typeof createKeyStore>, db: ReturnType<typeof openDatabase>) => T): T {
  const db = openDatabase(config.databasePath);
  try {
    return use(createKeyStore(db, { pepper: loadPepper(config.dataDir) }), db);
  } finally {
    db.close();
  }
}

/** Checks a secret against the database as the server does. */
function verify(secret: string) {
  return withStore((keys) => keys.verify(secret));
}

/** The output of a command after its first line, which names the database. */
function after(result: { code: number; lines: string[] }) {
  expect(result.lines[0]).toBe(`database: ${config.databasePath}`);
  return { code: result.code, lines: result.lines.slice(1) };
}

function configWith(yaml?: string): Readonly<Config> {
  const root = mkdtempSync(path.join(tmpdir(), 'omnigate-keys-'));
  const env: NodeJS.ProcessEnv = { OMNIGATE_DATA_DIR: path.join(root, 'data') };
  if (yaml) {
    env.OMNIGATE_CONFIG = path.join(root, 'omnigate.yaml');
    writeFileSync(env.OMNIGATE_CONFIG, yaml);
  }
  return loadConfig(env);
}

beforeEach(() => {
  config = configWith();
  // The server has run once in this data directory.
  withStore(() => undefined);
});

describe('keys create', () => {
  it('creates a key, prints it once, and stores neither it nor its SHA-256', () => {
    const { code, lines } = after(run('create', '--name', 'ci'));
    expect(code).toBe(0);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(ci\)$/);
    expect(lines[1]).toBe('the key, shown this once:');
    const secret = lines[2];
    expect(secret).toMatch(/^og-[A-Za-z0-9_-]{32}$/);
    expect(verify(secret)).toMatchObject({
      id: lines[0].split(' ')[1],
      name: 'ci',
      prefix: secret.slice(0, 7),
      allowedModels: [],
      revokedAt: null,
    });
    withStore((_keys, db) => {
      const rows = db.prepare('SELECT * FROM api_keys').all() as Array<Record<string, unknown>>;
      expect(rows).toHaveLength(1);
      for (const value of Object.values(rows[0])) {
        expect(Buffer.isBuffer(value) ? value.toString('latin1') : String(value)).not.toContain(secret.slice(7, 15));
      }
    });
  });

  it('limits a key to the models given with --models, ids and aliases as configured', () => {
    const { code, lines } = after(run('create', '--name', 'limited', '--models', 'local-chat, local:chat,,'));
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(limited\) for models local-chat, local:chat$/);
    expect(verify(lines[2])?.allowedModels).toEqual(['local-chat', 'local:chat']);
  });

  it('refuses a model the configuration does not know (a typo), naming it and the known ones, and creates nothing', () => {
    const { code, lines } = after(run('create', '--name', 'typo', '--models', 'local:chat,locl:chat'));
    expect(code).toBe(2);
    expect(lines).toEqual([
      "unknown model 'locl:chat'; configured models and aliases: local:chat, local-chat, reference, local:image, local-image, local:speech, local:tts, local-speech, local:music, local-music, local:video, local-video, local:search, local-search",
    ]);
    expect(withStore((keys) => keys.list())).toEqual([]);
  });

  it('accepts the models, aliases and provider:model names of the configuration file, as the server resolves them', () => {
    config = configWith(
      'providers:\n  openai:\n    type: openai-compatible\n    base_url: http://127.0.0.1:9/v1\nmodels:\n  - provider: openai\n    model: gpt-4o-mini\n    aliases: [fast]\n',
    );
    withStore(() => undefined);
    // gpt-4.1 reaches the default chat model through the built-in agent routes.
    const { code, lines } = after(run('create', '--models', 'fast,openai:gpt-4o-mini,openai:gpt-4.1,gpt-4.1'));
    expect(code).toBe(0);
    expect(verify(lines[2])?.allowedModels).toEqual(['fast', 'openai:gpt-4o-mini', 'openai:gpt-4.1', 'gpt-4.1']);
    expect(after(run('create', '--models', 'slow')).lines[0]).toBe(
      "unknown model 'slow'; configured models and aliases: local:chat, local-chat, reference, local:image, local-image, local:speech, local:tts, local-speech, local:music, local-music, local:video, local-video, local:search, local-search, openai:gpt-4o-mini, fast",
    );
  });

  it('names a key "unnamed" when no --name is given', () => {
    const { code, lines } = after(run('create'));
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(unnamed\)$/);
  });
});

describe('keys list', () => {
  it('lists nothing for a new database', () => {
    expect(after(run('list'))).toEqual({ code: 0, lines: [] });
  });

  it('lists id, display prefix, name, models and state, never the secret', () => {
    const first = after(run('create', '--name', 'alpha')).lines;
    const second = after(run('create', '--name', 'beta', '--models', 'local:chat')).lines;
    withStore((keys) => keys.ensure('operator-chosen-key-1234', 'env-1'));
    const { code, lines } = after(run('list'));
    expect(code).toBe(0);
    const expected = [
      [first[0].split(' ')[1], `${first[2].slice(0, 7)}…`, 'alpha', 'all models', 'active'],
      [second[0].split(' ')[1], `${second[2].slice(0, 7)}…`, 'beta', 'local:chat', 'active'],
      [expect.stringMatching(/^key_/), '(no prefix)', 'env-1', 'all models', 'active'],
    ];
    expect(lines.map((line) => line.split('\t')).sort((a, b) => a[2].localeCompare(b[2]))).toEqual(expected);
    expect(lines.join('\n')).not.toContain(first[2].slice(7, 15));
    expect(lines.join('\n')).not.toContain('operator');
  });
});

describe('a data directory that does not exist (the command run in the wrong folder)', () => {
  it.each([[['list']], [['create', '--name', 'x']], [['revoke', 'key_0123456789abcdef']]])(
    '%o says where it looked and creates nothing',
    (argv) => {
      config = configWith();
      const { code, lines } = run(...argv);
      expect(code).toBe(1);
      expect(lines).toEqual([
        `no database at ${config.databasePath}: start the server once to create it, or set OMNIGATE_DATA_DIR to the server's data directory (now ${config.dataDir})`,
      ]);
      expect(existsSync(config.dataDir)).toBe(false);
    },
  );
});

describe('keys revoke', () => {
  it('revokes by id: the key stops verifying and is listed as revoked', () => {
    const created = after(run('create', '--name', 'doomed')).lines;
    const id = created[0].split(' ')[1];
    expect(after(run('revoke', id))).toEqual({ code: 0, lines: [`revoked ${id} (doomed)`] });
    expect(verify(created[2])).toBeUndefined();
    const [line] = after(run('list')).lines;
    expect(line.split('\t').slice(0, 4)).toEqual([id, `${created[2].slice(0, 7)}…`, 'doomed', 'all models']);
    expect(line.split('\t')[4]).toMatch(/^revoked \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
  });

  it('revokes by display prefix', () => {
    const created = after(run('create', '--name', 'by-prefix')).lines;
    const prefix = created[2].slice(0, 7);
    expect(after(run('revoke', prefix))).toEqual({
      code: 0,
      lines: [`revoked ${created[0].split(' ')[1]} (by-prefix)`],
    });
    expect(verify(created[2])).toBeUndefined();
  });

  it('revokes by the whole secret, without echoing it', () => {
    const created = after(run('create', '--name', 'leaked')).lines;
    const result = after(run('revoke', created[2]));
    expect(result).toEqual({ code: 0, lines: [`revoked ${created[0].split(' ')[1]} (leaked)`] });
    expect(verify(created[2])).toBeUndefined();
    expect(after(run('revoke', created[2]))).toEqual({
      code: 1,
      lines: [`no active key matches ${created[2].slice(0, 7)}…`],
    });
  });

  it('refuses a prefix that matches several keys, listing them by id, and revokes none', () => {
    const first = after(run('create', '--name', 'first')).lines;
    const second = after(run('create', '--name', 'second')).lines;
    // Two keys sharing their 4 random display characters: rare, but it happens.
    withStore((_keys, db) => db.prepare('UPDATE api_keys SET prefix = ?').run('og-same'));
    const [firstId, secondId] = [first[0].split(' ')[1], second[0].split(' ')[1]];
    const { code, lines } = after(run('revoke', 'og-same'));
    expect(code).toBe(1);
    expect(lines[0]).toBe('og-same is ambiguous: it matches 2 active keys; revoke one by id:');
    expect(lines.slice(1).sort()).toEqual([`  ${firstId}\tfirst`, `  ${secondId}\tsecond`].sort());
    expect(verify(first[2])?.name).toBe('first');
    expect(verify(second[2])?.name).toBe('second');
  });

  it('exits 1 when no active key matches, also for a key already revoked', () => {
    const created = after(run('create', '--name', 'once')).lines;
    const id = created[0].split(' ')[1];
    expect(after(run('revoke', 'key_doesnotexist'))).toEqual({
      code: 1,
      lines: ['no active key matches key_doesnotexist'],
    });
    expect(after(run('revoke', id)).code).toBe(0);
    expect(after(run('revoke', id))).toEqual({ code: 1, lines: [`no active key matches ${id}`] });
  });

  it('leaves other keys working', () => {
    const keep = after(run('create', '--name', 'keep')).lines;
    const drop = after(run('create', '--name', 'drop')).lines;
    expect(after(run('revoke', drop[0].split(' ')[1])).code).toBe(0);
    expect(verify(keep[2])?.name).toBe('keep');
    expect(verify(drop[2])).toBeUndefined();
  });
});

describe('usage', () => {
  it.each([[['--help']], [['-h']], [['help']]])('%o prints the usage and the database in use, and exits 0', (argv) => {
    const { code, lines } = run(...argv);
    expect(code).toBe(0);
    expect(lines.join('\n')).toContain('omnigate keys create [--name NAME] [--models MODEL,MODEL]');
    expect(lines.join('\n')).toContain(`database: ${config.databasePath} (from OMNIGATE_DATA_DIR`);
  });

  it.each([[[]], [['revoke']], [['rotate']]])('prints usage and exits 2 for %o', (argv) => {
    const { code, lines } = run(...argv);
    expect(code).toBe(2);
    expect(lines.join('\n')).toContain('omnigate keys revoke KEY_ID_OR_PREFIX');
  });

  it('prints the usage, not a stack trace, for an unknown flag', () => {
    const { code, lines } = run('create', '--colour', 'blue');
    expect(code).toBe(2);
    expect(lines.join('\n')).toMatch(/Unknown option '--colour'/);
    expect(lines.join('\n')).toContain('omnigate keys create');
  });
});
