/** `omnigate keys` with OMNIGATE_DATABASE_URL manages the PostgreSQL database's keys, which the server's stores then see. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { runKeysCommand } from '../../server/cli/keys.js';
import { loadConfig } from '../../server/config.js';
import { openStores } from '../../server/services.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';

it('creates, lists and revokes keys in the PostgreSQL database', async (context) => {
  if (!(await postgresAvailable())) {
    context.skip('no PostgreSQL server');
    return;
  }
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'omnigate-keys-pg-'));
  try {
    const config = loadConfig({ OMNIGATE_DATA_DIR: dataDir, OMNIGATE_DATABASE_URL: database.url });
    const lines: string[] = [];
    const run = (...argv: string[]) => runKeysCommand(argv, config, (line) => lines.push(line));
    expect(await run('create', '--name', 'ops')).toBe(0);
    expect(lines[0]).toBe('database: PostgreSQL (OMNIGATE_DATABASE_URL)');
    expect(lines.join('\n')).not.toContain(database.url);
    const key = lines.at(-1)!;
    const stores = await openStores({ kind: 'postgres', url: database.url, dataDir });
    try {
      expect((await stores.keys.verify(key))?.name).toBe('ops');
      expect(await run('revoke', key)).toBe(0);
      expect(await stores.keys.verify(key)).toBeUndefined();
      lines.length = 0;
      expect(await run('list')).toBe(0);
      expect(lines.join('\n')).toMatch(/ops\tall models\trevoked /);
    } finally {
      await stores.close();
    }
  } finally {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
