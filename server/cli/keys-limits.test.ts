/**
 * The keys and projects commands with limits, on a real SQLite data directory and a real PostgreSQL database
 * (skipped with a notice when none runs here, except under CI=true): what the flags store is what the key
 * store reads back, bad values are refused naming their flag with exit code 2 and change nothing.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable } from '../../test/helpers/postgres.js';
import { type Config, loadConfig } from '../config.js';
import { openStores } from '../services.js';
import { runKeysCommand, runProjectsCommand } from './keys.js';

let pgUp = false;
beforeAll(async () => {
  pgUp = await postgresAvailable();
  if (!pgUp && process.env.CI === 'true') {
    throw new Error('PostgreSQL is not reachable (CI=true)');
  }
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

async function sqliteConfig(): Promise<Readonly<Config>> {
  const root = mkdtempSync(path.join(tmpdir(), 'omnigate-keys-limits-'));
  const config = loadConfig({ OMNIGATE_DATA_DIR: path.join(root, 'data') });
  // The server has run once in this data directory.
  const stores = await openStores({ kind: 'data-dir', dataDir: config.dataDir, databasePath: config.databasePath });
  await stores.close();
  return config;
}

async function postgresConfig(): Promise<Readonly<Config>> {
  const database = await createTestDatabase();
  const root = mkdtempSync(path.join(tmpdir(), 'omnigate-keys-limits-'));
  mkdirSync(path.join(root, 'data'));
  const config = loadConfig({ OMNIGATE_DATA_DIR: path.join(root, 'data'), OMNIGATE_DATABASE_URL: database.url });
  cleanups.push(() => database.drop());
  return config;
}

const backends: Array<[string, () => Promise<Readonly<Config>>]> = [
  ['sqlite', sqliteConfig],
  ['postgres', postgresConfig],
];

describe.each(backends)('keys and projects with limits on %s', (backend, makeConfig) => {
  async function setUp(context: { skip: (note?: string) => void }) {
    if (backend === 'postgres' && !pgUp) {
      context.skip('no PostgreSQL server');
    }
    const config = await makeConfig();
    const run = async (command: typeof runKeysCommand, ...argv: string[]) => {
      const lines: string[] = [];
      const code = await command(argv, config, (line) => lines.push(line));
      return { code, lines: lines.slice(1), all: lines };
    };
    const readKeys = async () => {
      const stores = await openStores(
        config.databaseUrl
          ? { kind: 'postgres', url: config.databaseUrl, dataDir: config.dataDir }
          : { kind: 'data-dir', dataDir: config.dataDir, databasePath: config.databasePath },
      );
      try {
        return { keys: await stores.keys.list(), projects: await stores.projects.list() };
      } finally {
        await stores.close();
      }
    };
    return {
      keys: (...argv: string[]) => run(runKeysCommand, ...argv),
      projects: (...argv: string[]) => run(runProjectsCommand, ...argv),
      readKeys,
    };
  }

  it('creates a project and a key in it with limits, updates and clears them, lists them', async (context) => {
    const { keys, projects, readKeys } = await setUp(context);
    expect(await projects('create', 'research', '--rpm', '100', '--budget', '50', '--budget-period', 'month')).toEqual({
      code: 0,
      lines: ['created project research, limits: rpm=100 budget=$50/month'],
      all: expect.any(Array),
    });
    const created = await keys(
      'create',
      '--name',
      'batch',
      '--project',
      'research',
      '--rpm',
      '10',
      '--tpm',
      '5000',
      '--max-parallel',
      '2',
      '--budget',
      '2.5',
      '--budget-period',
      'day',
    );
    expect(created.code).toBe(0);
    expect(created.lines[0]).toMatch(
      /^created key_[0-9a-f]{16} \(batch\) in project research, limits: rpm=10 tpm=5000 max-parallel=2 budget=\$2\.5\/day$/,
    );
    const id = created.lines[0].split(' ')[1];
    let stored = await readKeys();
    expect(stored.keys.find((key) => key.id === id)).toMatchObject({
      project: 'research',
      limits: { rpm: 10, tpm: 5000, maxParallel: 2, budgetUsd: 2.5, budgetPeriod: 'day' },
      admin: false,
    });

    const updated = await keys('update', id, '--rpm', '20', '--clear', 'budget,budget-period,project');
    expect(updated.code).toBe(0);
    expect(updated.lines).toEqual([`updated ${id} (batch), limits: rpm=20 tpm=5000 max-parallel=2`]);
    stored = await readKeys();
    expect(stored.keys.find((key) => key.id === id)).toMatchObject({
      project: null,
      limits: { rpm: 20, tpm: 5000, maxParallel: 2 },
    });

    const listed = await keys('list');
    expect(
      listed.lines
        .find((line) => line.startsWith(id))
        ?.split('\t')
        .slice(5),
    ).toEqual(['rpm=20 tpm=5000 max-parallel=2']);
    expect((await projects('update', 'research', '--clear', 'budget', '--tpm', '7')).lines).toEqual([
      'updated project research, limits: rpm=100 tpm=7',
    ]);
    expect((await projects('list')).lines).toEqual(['research\trpm=100 tpm=7']);
    expect((await projects('delete', 'research')).code).toBe(0);
    expect((await projects('delete', 'research')).code).toBe(1);
    expect((await readKeys()).projects).toEqual([]);
  });

  it('creates an admin key with --admin', async (context) => {
    const { keys, readKeys } = await setUp(context);
    const created = await keys('create', '--name', 'ops', '--admin');
    expect(created.code).toBe(0);
    expect(created.lines[0]).toContain('admin key (admin API only)');
    expect((await readKeys()).keys[0].admin).toBe(true);
    expect((await keys('list')).lines[0].split('\t').at(-1)).toBe('admin');
  });

  it('refuses negative, huge, fractional or non-numeric values naming the flag, with exit code 2, creating nothing', async (context) => {
    const { keys, projects, readKeys } = await setUp(context);
    const cases: Array<[string[], string]> = [
      [['--rpm=-1'], '--rpm must not be negative'],
      [['--tpm', 'lots'], '--tpm must be a number'],
      [['--max-parallel', '1.5'], '--max-parallel must be a whole number'],
      [['--budget', '99999999999'], '--budget must be at most'],
      [['--media-units-per-day', '0x10'], '--media-units-per-day must be a number'],
      [['--budget-period', 'week'], '--budget-period must be one of day, month, total'],
      [['--project', 'has space'], '--project must be'],
      [['--clear', 'rpm'], '--clear is for keys update'],
    ];
    for (const [flags, message] of cases) {
      const result = await keys('create', ...flags);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.all[0]).toContain(message);
    }
    const projectCases: Array<[string[], string]> = [
      [['--rpm', '-'], '--rpm must be a number'],
      [['--budget=-3'], '--budget must not be negative'],
    ];
    for (const [flags, message] of projectCases) {
      const result = await projects('create', 'p', ...flags);
      expect(result.code).toBe(2);
      expect(result.all[0]).toContain(message);
    }
    expect((await projects('create', 'bad name')).code).toBe(2);
    const unknownProject = await keys('create', '--project', 'ghost');
    expect(unknownProject.code).toBe(2);
    expect(unknownProject.lines[0]).toContain("no project named 'ghost'");
    expect((await keys('update', 'key_nope', '--rpm', '1')).code).toBe(1);
    expect(await readKeys()).toEqual({ keys: [], projects: [] });
  });
});
