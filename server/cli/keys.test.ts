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

async function run(...argv: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runKeysCommand(argv, config, (line) => lines.push(line));
  return { code, lines };
}

/** Opens the data directory as the server does. */
async function withStore<T>(
  use: (keys: ReturnType<typeof createKeyStore>, db: ReturnType<typeof openDatabase>) => T,
): Promise<Awaited<T>> {
  const db = openDatabase(config.databasePath);
  try {
    return await use(createKeyStore(db, { pepper: loadPepper(config.dataDir) }), db);
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

beforeEach(async () => {
  config = configWith();
  // The server has run once in this data directory.
  await withStore(() => undefined);
});

describe('keys create', () => {
  it('creates a key, prints it once, and stores neither it nor its SHA-256', async () => {
    const { code, lines } = after(await run('create', '--name', 'ci'));
    expect(code).toBe(0);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(ci\)$/);
    expect(lines[1]).toBe('the key, shown this once:');
    const secret = lines[2];
    expect(secret).toMatch(/^og-[A-Za-z0-9_-]{32}$/);
    expect(await verify(secret)).toMatchObject({
      id: lines[0].split(' ')[1],
      name: 'ci',
      prefix: secret.slice(0, 7),
      allowedModels: [],
      revokedAt: null,
    });
    await withStore((_keys, db) => {
      const rows = db.prepare('SELECT * FROM api_keys').all() as Array<Record<string, unknown>>;
      expect(rows).toHaveLength(1);
      for (const value of Object.values(rows[0])) {
        expect(Buffer.isBuffer(value) ? value.toString('latin1') : String(value)).not.toContain(secret.slice(7, 15));
      }
    });
  });

  it('limits a key to the models given with --models, ids and aliases as configured', async () => {
    const { code, lines } = after(await run('create', '--name', 'limited', '--models', 'local-chat, local:chat,,'));
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(limited\) for models local-chat, local:chat$/);
    expect((await verify(lines[2]))?.allowedModels).toEqual(['local-chat', 'local:chat']);
  });

  it('refuses a model the configuration does not know (a typo), naming it and the known ones, and creates nothing', async () => {
    const { code, lines } = after(await run('create', '--name', 'typo', '--models', 'local:chat,locl:chat'));
    expect(code).toBe(2);
    expect(lines).toEqual([
      "unknown model 'locl:chat'; configured models and aliases: local:chat, local-chat, reference, local:image, local-image, local:speech, local:tts, local-speech, local:music, local-music, local:video, local-video, local:search, local-search, local:embed, local-embed",
    ]);
    expect(await withStore((keys) => keys.list())).toEqual([]);
  });

  it('accepts the models, aliases and provider:model names of the configuration file, as the server resolves them', async () => {
    config = configWith(
      'providers:\n  openai:\n    type: openai-compatible\n    base_url: http://127.0.0.1:9/v1\nmodels:\n  - provider: openai\n    model: gpt-4o-mini\n    aliases: [fast]\n',
    );
    await withStore(() => undefined);
    // gpt-4.1 reaches the default chat model through the built-in agent routes.
    const { code, lines } = after(await run('create', '--models', 'fast,openai:gpt-4o-mini,openai:gpt-4.1,gpt-4.1'));
    expect(code).toBe(0);
    expect((await verify(lines[2]))?.allowedModels).toEqual([
      'fast',
      'openai:gpt-4o-mini',
      'openai:gpt-4.1',
      'gpt-4.1',
    ]);
    expect(after(await run('create', '--models', 'slow')).lines[0]).toBe(
      "unknown model 'slow'; configured models and aliases: local:chat, local-chat, reference, local:image, local-image, local:speech, local:tts, local-speech, local:music, local-music, local:video, local-video, local:search, local-search, local:embed, local-embed, openai:gpt-4o-mini, fast",
    );
  });

  it('names a key "unnamed" when no --name is given', async () => {
    const { code, lines } = after(await run('create'));
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(unnamed\)$/);
  });
});

describe('keys list', () => {
  it('lists nothing for a new database', async () => {
    expect(after(await run('list'))).toEqual({ code: 0, lines: [] });
  });

  it('lists id, display prefix, name, models and state, never the secret', async () => {
    const first = after(await run('create', '--name', 'alpha')).lines;
    const second = after(await run('create', '--name', 'beta', '--models', 'local:chat')).lines;
    await withStore((keys) => keys.ensure('operator-chosen-key-1234', 'env-1'));
    const { code, lines } = after(await run('list'));
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
    async (argv) => {
      config = configWith();
      const { code, lines } = await run(...argv);
      expect(code).toBe(1);
      expect(lines).toEqual([
        `no database at ${config.databasePath}: start the server once to create it, or set OMNIGATE_DATA_DIR to the server's data directory (now ${config.dataDir})`,
      ]);
      expect(existsSync(config.dataDir)).toBe(false);
    },
  );
});

describe('keys revoke', () => {
  it('revokes by id: the key stops verifying and is listed as revoked', async () => {
    const created = after(await run('create', '--name', 'doomed')).lines;
    const id = created[0].split(' ')[1];
    expect(after(await run('revoke', id))).toEqual({ code: 0, lines: [`revoked ${id} (doomed)`] });
    expect(await verify(created[2])).toBeUndefined();
    const [line] = after(await run('list')).lines;
    expect(line.split('\t').slice(0, 4)).toEqual([id, `${created[2].slice(0, 7)}…`, 'doomed', 'all models']);
    expect(line.split('\t')[4]).toMatch(/^revoked \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
  });

  it('revokes by display prefix', async () => {
    const created = after(await run('create', '--name', 'by-prefix')).lines;
    const prefix = created[2].slice(0, 7);
    expect(after(await run('revoke', prefix))).toEqual({
      code: 0,
      lines: [`revoked ${created[0].split(' ')[1]} (by-prefix)`],
    });
    expect(await verify(created[2])).toBeUndefined();
  });

  it('revokes by the whole secret, without echoing it', async () => {
    const created = after(await run('create', '--name', 'leaked')).lines;
    const result = after(await run('revoke', created[2]));
    expect(result).toEqual({ code: 0, lines: [`revoked ${created[0].split(' ')[1]} (leaked)`] });
    expect(await verify(created[2])).toBeUndefined();
    expect(after(await run('revoke', created[2]))).toEqual({
      code: 1,
      lines: [`no active key matches ${created[2].slice(0, 7)}…`],
    });
  });

  it('refuses a prefix that matches several keys, listing them by id, and revokes none', async () => {
    const first = after(await run('create', '--name', 'first')).lines;
    const second = after(await run('create', '--name', 'second')).lines;
    // Two keys sharing their 4 random display characters: rare, but it happens.
    await withStore((_keys, db) => db.prepare('UPDATE api_keys SET prefix = ?').run('og-same'));
    const [firstId, secondId] = [first[0].split(' ')[1], second[0].split(' ')[1]];
    const { code, lines } = after(await run('revoke', 'og-same'));
    expect(code).toBe(1);
    expect(lines[0]).toBe('og-same is ambiguous: it matches 2 active keys; revoke one by id:');
    expect(lines.slice(1).sort()).toEqual([`  ${firstId}\tfirst`, `  ${secondId}\tsecond`].sort());
    expect((await verify(first[2]))?.name).toBe('first');
    expect((await verify(second[2]))?.name).toBe('second');
  });

  it('exits 1 when no active key matches, also for a key already revoked', async () => {
    const created = after(await run('create', '--name', 'once')).lines;
    const id = created[0].split(' ')[1];
    expect(after(await run('revoke', 'key_doesnotexist'))).toEqual({
      code: 1,
      lines: ['no active key matches key_doesnotexist'],
    });
    expect(after(await run('revoke', id)).code).toBe(0);
    expect(after(await run('revoke', id))).toEqual({ code: 1, lines: [`no active key matches ${id}`] });
  });

  it('leaves other keys working', async () => {
    const keep = after(await run('create', '--name', 'keep')).lines;
    const drop = after(await run('create', '--name', 'drop')).lines;
    expect(after(await run('revoke', drop[0].split(' ')[1])).code).toBe(0);
    expect((await verify(keep[2]))?.name).toBe('keep');
    expect(await verify(drop[2])).toBeUndefined();
  });
});

describe('usage', () => {
  it.each([[['--help']], [['-h']], [['help']]])(
    '%o prints the usage and the database in use, and exits 0',
    async (argv) => {
      const { code, lines } = await run(...argv);
      expect(code).toBe(0);
      expect(lines.join('\n')).toContain('omnigate keys create [--name NAME] [--models MODEL,MODEL]');
      expect(lines.join('\n')).toContain(`database: ${config.databasePath} (from OMNIGATE_DATA_DIR`);
    },
  );

  it.each([[[]], [['revoke']], [['rotate']]])('prints usage and exits 2 for %o', async (argv) => {
    const { code, lines } = await run(...argv);
    expect(code).toBe(2);
    expect(lines.join('\n')).toContain('omnigate keys revoke KEY_ID_OR_PREFIX');
  });

  it('prints the usage, not a stack trace, for an unknown flag', async () => {
    const { code, lines } = await run('create', '--colour', 'blue');
    expect(code).toBe(2);
    expect(lines.join('\n')).toMatch(/Unknown option '--colour'/);
    expect(lines.join('\n')).toContain('omnigate keys create');
  });
});
