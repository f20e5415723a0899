/**
 * `npm run keys -- create [--name NAME] [--models a,b]`, `npm run keys -- list`, `npm run keys -- revoke ID|PREFIX|KEY`.
 * Works on the same database as the server (OMNIGATE_DATA_DIR, also while it runs: changes take effect at the
 * server's next request), and reads the same configuration (OMNIGATE_CONFIG) to check model names. Every
 * command names the database it used; none creates one, so a command run in the wrong folder says where it
 * looked instead of quietly working on a new, empty database. A created key is printed once; only a keyed
 * hash of it is stored.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { ApiError } from '../core/api-error.js';
import { buildRegistry } from '../providers/build-registry.js';
import { openDatabase } from '../storage/database.js';
import { createKeyStore, type KeyStore } from '../storage/key-store.js';
import { loadPepper } from '../storage/pepper.js';
import { openStores } from '../services.js';

export type KeysCommandConfig = Pick<
  Config,
  | 'dataDir'
  | 'databasePath'
  | 'pepperFile'
  | 'providers'
  | 'models'
  | 'aliases'
  | 'routes'
  | 'defaultChatModel'
  | 'agentRoutes'
> &
  Partial<Pick<Config, 'databaseUrl'>>;

/** Longer than any key id (`key_` and 16 hex digits): such a target may be a whole secret. */
const SECRET_LENGTH_FLOOR = 20;

const USAGE = `usage:
  omnigate keys create [--name NAME] [--models MODEL,MODEL]
  omnigate keys list
  omnigate keys revoke KEY_ID_OR_PREFIX_OR_KEY
  omnigate keys --help
(also as npm run keys -- …)`;

function parseKeysArguments(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, models: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
}

/** The names of `models` the server would not resolve, checked by the registry the server builds. */
function unknownModels(config: KeysCommandConfig, models: string[]): { unknown: string[]; known: string[] } {
  const registry = buildRegistry(config);
  try {
    const unknown = models.filter((model) => {
      try {
        registry.resolve(model, 'chat');
        return false;
      } catch (error) {
        // A 400 (a model of another type) still names a model; only 404 means there is none.
        return error instanceof ApiError && error.status === 404;
      }
    });
    return { unknown, known: registry.list().flatMap((model) => [model.id, ...model.aliases]) };
  } finally {
    void registry.close();
  }
}

export async function runKeysCommand(
  argv: string[],
  config: KeysCommandConfig,
  out: (line: string) => void,
): Promise<number> {
  let parsed: ReturnType<typeof parseKeysArguments>;
  try {
    parsed = parseKeysArguments(argv);
  } catch (error) {
    out(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command, target] = positionals;
  if (values.help || command === 'help') {
    out(USAGE);
    out(`database: ${config.databasePath} (from OMNIGATE_DATA_DIR, default ./data; model names from OMNIGATE_CONFIG)`);
    return 0;
  }
  if (!(command === 'create' || command === 'list' || (command === 'revoke' && target))) {
    out(USAGE);
    return 2;
  }
  // With OMNIGATE_DATABASE_URL the keys are the PostgreSQL database's (the URL is not shown: it may hold a password).
  let opened: { keys: KeyStore; close(): Promise<void> | void };
  if (config.databaseUrl) {
    out('database: PostgreSQL (OMNIGATE_DATABASE_URL)');
    opened = await openStores({
      kind: 'postgres',
      url: config.databaseUrl,
      dataDir: config.dataDir,
      pepperFile: config.pepperFile,
    });
  } else {
    const sqlite = openSqliteKeys(config, out);
    if (!sqlite) {
      return 1;
    }
    opened = sqlite;
  }
  const { keys } = opened;
  try {
    if (command === 'create') {
      const allowedModels = (values.models ?? '')
        .split(',')
        .map((model) => model.trim())
        .filter(Boolean);
      const { unknown, known } = unknownModels(config, allowedModels);
      if (unknown.length > 0) {
        out(
          `unknown model${unknown.length > 1 ? 's' : ''} ${unknown.map((model) => `'${model}'`).join(', ')}; configured models and aliases: ${known.join(', ')}`,
        );
        return 2;
      }
      const { key, record } = await keys.create({ name: values.name ?? 'unnamed', allowedModels });
      out(
        `created ${record.id} (${record.name})${allowedModels.length ? ` for models ${allowedModels.join(', ')}` : ''}`,
      );
      out('the key, shown this once:');
      out(key);
      return 0;
    }
    if (command === 'list') {
      for (const record of await keys.list()) {
        const state =
          record.revokedAt === null ? 'active' : `revoked ${new Date(record.revokedAt * 1000).toISOString()}`;
        const models = record.allowedModels.length ? record.allowedModels.join(',') : 'all models';
        out(
          `${record.id}\t${record.prefix ? `${record.prefix}…` : '(no prefix)'}\t${record.name}\t${models}\t${state}`,
        );
      }
      return 0;
    }
    const matches = await keys.find(target);
    // A pasted secret is never echoed back (terminal scrollback, CI logs): only what `keys list` shows of it.
    const shown = target.length > SECRET_LENGTH_FLOOR ? `${target.slice(0, 7)}…` : target;
    if (matches.length > 1) {
      out(`${shown} is ambiguous: it matches ${matches.length} active keys; revoke one by id:`);
      matches.forEach((record) => out(`  ${record.id}\t${record.name}`));
      return 1;
    }
    if (matches.length === 1 && (await keys.revoke(matches[0].id))) {
      out(`revoked ${matches[0].id} (${matches[0].name})`);
      return 0;
    }
    out(`no active key matches ${shown}`);
    return 1;
  } finally {
    await opened.close();
  }
}

/** The SQLite database's key store, or undefined (said why) when there is no database yet. */
function openSqliteKeys(
  config: KeysCommandConfig,
  out: (line: string) => void,
): { keys: KeyStore; close(): void } | undefined {
  if (!existsSync(config.databasePath)) {
    out(
      `no database at ${config.databasePath}: start the server once to create it, or set OMNIGATE_DATA_DIR to the server's data directory (now ${config.dataDir})`,
    );
    return undefined;
  }
  out(`database: ${config.databasePath}`);
  const db = openDatabase(config.databasePath);
  try {
    const pepper = loadPepper(config.dataDir, {
      file: config.pepperFile,
      warn: (message) => process.stderr.write(`omnigate: ${message}\n`),
    });
    return { keys: createKeyStore(db, { pepper }), close: () => db.close() };
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The command as a process runs it: the environment's configuration, lines to stdout; returns the exit code. */
export async function keysMain(argv: string[]): Promise<number> {
  // Files this command creates (-wal/-shm, a pepper for a database from before peppers) stay private.
  process.umask(0o077);
  try {
    const config = loadConfig(process.env);
    return await runKeysCommand(argv, config, (line) => process.stdout.write(`${line}\n`));
  } catch (error) {
    if (!(error instanceof ConfigError)) {
      throw error;
    }
    process.stderr.write(`omnigate keys: configuration error: ${error.message}\n`);
    return 78;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await keysMain(process.argv.slice(2));
}
