import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../storage/database.js';
import { createKeyStore } from '../storage/key-store.js';
import { runKeysCommand } from './keys.js';

let databasePath: string;

function run(...argv: string[]): { code: number; lines: string[] } {
  const lines: string[] = [];
  const code = runKeysCommand(argv, databasePath, (line) => lines.push(line));
  return { code, lines };
}

/** Checks a secret against the database as the server does. */
function verify(secret: string) {
  const db = openDatabase(databasePath);
  try {
    return createKeyStore(db).verify(secret);
  } finally {
    db.close();
  }
}

beforeEach(() => {
  databasePath = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-keys-')), 'data', 'omnigate.sqlite');
});

describe('keys create', () => {
  it('creates a key, prints it once, and stores only its hash', () => {
    const { code, lines } = run('create', '--name', 'ci');
    expect(code).toBe(0);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(ci\)$/);
    expect(lines[1]).toBe('the key, shown this once:');
    const secret = lines[2];
    expect(secret).toMatch(/^og-[A-Za-z0-9_-]{32}$/);

    const record = verify(secret);
    expect(record).toMatchObject({ id: lines[0].split(' ')[1], name: 'ci', prefix: secret.slice(0, 10), allowedModels: [], revokedAt: null });

    const db = new Database(databasePath, { readonly: true });
    try {
      const rows = db.prepare('SELECT * FROM api_keys').all() as Array<Record<string, unknown>>;
      expect(rows).toHaveLength(1);
      expect(rows[0].hash).toEqual(createHash('sha256').update(secret).digest());
      for (const value of Object.values(rows[0])) {
        expect(Buffer.isBuffer(value) ? value.toString('hex') : String(value)).not.toContain(secret);
      }
    } finally {
      db.close();
    }
  });

  it('limits a key to the models given with --models', () => {
    const { code, lines } = run('create', '--name', 'limited', '--models', 'local-chat, fast,,');
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(limited\) for models local-chat, fast$/);
    expect(verify(lines[2])?.allowedModels).toEqual(['local-chat', 'fast']);
  });

  it('names a key "unnamed" when no --name is given', () => {
    const { code, lines } = run('create');
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^created key_[0-9a-f]{16} \(unnamed\)$/);
  });
});

describe('keys list', () => {
  it('lists nothing for a new database', () => {
    expect(run('list')).toEqual({ code: 0, lines: [] });
  });

  it('lists id, prefix, name, models and state, never the secret', () => {
    const first = run('create', '--name', 'alpha').lines;
    const second = run('create', '--name', 'beta', '--models', 'local:chat').lines;
    const { code, lines } = run('list');
    expect(code).toBe(0);
    const expected = [
      [first[0].split(' ')[1], `${first[2].slice(0, 10)}…`, 'alpha', 'all models', 'active'],
      [second[0].split(' ')[1], `${second[2].slice(0, 10)}…`, 'beta', 'local:chat', 'active'],
    ];
    expect(lines.map((line) => line.split('\t')).sort((a, b) => a[2].localeCompare(b[2]))).toEqual(expected);
    expect(lines.join('\n')).not.toContain(first[2]);
    expect(lines.join('\n')).not.toContain(second[2]);
  });
});

describe('keys revoke', () => {
  it('revokes by id: the key stops verifying and is listed as revoked', () => {
    const created = run('create', '--name', 'doomed').lines;
    const id = created[0].split(' ')[1];
    expect(run('revoke', id)).toEqual({ code: 0, lines: [`revoked ${id}`] });
    expect(verify(created[2])).toBeUndefined();
    const [line] = run('list').lines;
    expect(line.split('\t').slice(0, 4)).toEqual([id, `${created[2].slice(0, 10)}…`, 'doomed', 'all models']);
    expect(line.split('\t')[4]).toMatch(/^revoked \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
  });

  it('revokes by prefix', () => {
    const created = run('create', '--name', 'by-prefix').lines;
    const prefix = created[2].slice(0, 10);
    expect(run('revoke', prefix)).toEqual({ code: 0, lines: [`revoked ${prefix}`] });
    expect(verify(created[2])).toBeUndefined();
  });

  it('exits 1 when no active key matches, also for a key already revoked', () => {
    const created = run('create', '--name', 'once').lines;
    const id = created[0].split(' ')[1];
    expect(run('revoke', 'key_doesnotexist')).toEqual({ code: 1, lines: ['no active key matches key_doesnotexist'] });
    expect(run('revoke', id).code).toBe(0);
    expect(run('revoke', id)).toEqual({ code: 1, lines: [`no active key matches ${id}`] });
  });

  it('leaves other keys working', () => {
    const keep = run('create', '--name', 'keep').lines;
    const drop = run('create', '--name', 'drop').lines;
    expect(run('revoke', drop[0].split(' ')[1]).code).toBe(0);
    expect(verify(keep[2])?.name).toBe('keep');
    expect(verify(drop[2])).toBeUndefined();
  });
});

describe('usage', () => {
  it.each([[[]], [['revoke']], [['rotate']]])('prints usage and exits 2 for %o', (argv) => {
    const { code, lines } = run(...argv);
    expect(code).toBe(2);
    expect(lines).toEqual([
      'usage:\n  npm run keys -- create [--name NAME] [--models MODEL,MODEL]\n  npm run keys -- list\n  npm run keys -- revoke KEY_ID_OR_PREFIX',
    ]);
  });

  it('prints the usage, not a stack trace, for an unknown flag', () => {
    const { code, lines } = run('create', '--colour', 'blue');
    expect(code).toBe(2);
    expect(lines.join('\n')).toMatch(/Unknown option '--colour'/);
    expect(lines.join('\n')).toContain('npm run keys -- create');
  });
});
