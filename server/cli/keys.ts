/**
 * `npm run keys -- create [--name NAME] [--models a,b]`, `npm run keys -- list`, `npm run keys -- revoke ID|PREFIX`.
 * Works on the same database as the server (OMNIGATE_DATA_DIR), also while it runs. A created key is
 * printed once; only its hash is stored.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase } from '../storage/database.js';
import { createKeyStore } from '../storage/key-store.js';

const USAGE = `usage:
  npm run keys -- create [--name NAME] [--models MODEL,MODEL]
  npm run keys -- list
  npm run keys -- revoke KEY_ID_OR_PREFIX`;

function parseKeysArguments(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, models: { type: 'string' } },
  });
}

export function runKeysCommand(argv: string[], databasePath: string, out: (line: string) => void): number {
  let parsed: ReturnType<typeof parseKeysArguments>;
  try {
    parsed = parseKeysArguments(argv);
  } catch (error) {
    out(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command, target] = positionals;
  const db = openDatabase(databasePath);
  try {
    const keys = createKeyStore(db);
    if (command === 'create') {
      const allowedModels = (values.models ?? '').split(',').map((model) => model.trim()).filter(Boolean);
      const { key, record } = keys.create({ name: values.name ?? 'unnamed', allowedModels });
      out(`created ${record.id} (${record.name})${allowedModels.length ? ` for models ${allowedModels.join(', ')}` : ''}`);
      out('the key, shown this once:');
      out(key);
      return 0;
    }
    if (command === 'list') {
      for (const record of keys.list()) {
        const state = record.revokedAt === null ? 'active' : `revoked ${new Date(record.revokedAt * 1000).toISOString()}`;
        const models = record.allowedModels.length ? record.allowedModels.join(',') : 'all models';
        out(`${record.id}\t${record.prefix}…\t${record.name}\t${models}\t${state}`);
      }
      return 0;
    }
    if (command === 'revoke' && target) {
      if (keys.revoke(target)) {
        out(`revoked ${target}`);
        return 0;
      }
      out(`no active key matches ${target}`);
      return 1;
    }
    out(USAGE);
    return 2;
  } finally {
    db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = loadConfig(process.env);
  process.exitCode = runKeysCommand(process.argv.slice(2), config.databasePath, (line) => process.stdout.write(`${line}\n`));
}
