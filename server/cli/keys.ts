/**
 * `npm run keys -- create [--name NAME] [--models a,b] [limits]`, `npm run keys -- list`,
 * `npm run keys -- update KEY_ID [limits]`, `npm run keys -- revoke ID|PREFIX|KEY`; and `omnigate projects …`
 * (`runProjectsCommand`). Limits are `--project NAME --rpm N --tpm N --max-parallel N --media-units-per-day N
 * --budget USD --budget-period day|month|total`, `--clear FIELD,…` removes some on update; a bad value is
 * refused naming its flag, with exit code 2 like every usage error.
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
import { checkLimitValue, type Limits, LimitValueError, LIMIT_FIELDS, mergeLimits } from '../core/limits.js';
import { createKeyStore, type ApiKeyRecord, type KeyStore } from '../storage/key-store.js';
import { createProjectStore, PROJECT_NAME, type ProjectStore } from '../storage/project-store.js';
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

const LIMIT_FLAGS_USAGE =
  '[--rpm N] [--tpm N] [--max-parallel N] [--media-units-per-day N] [--budget USD] [--budget-period day|month|total]';

const USAGE = `usage:
  omnigate keys create [--name NAME] [--models MODEL,MODEL] [--project NAME] ${LIMIT_FLAGS_USAGE} [--admin]
  omnigate keys update KEY_ID [--name NAME] [--project NAME] ${LIMIT_FLAGS_USAGE} [--clear FIELD,FIELD]
  omnigate keys list
  omnigate keys revoke KEY_ID_OR_PREFIX_OR_KEY
  omnigate keys --help
--clear takes rpm, tpm, max-parallel, media-units-per-day, budget, budget-period, project.
(also as npm run keys -- …)`;

const PROJECTS_USAGE = `usage:
  omnigate projects create NAME ${LIMIT_FLAGS_USAGE}
  omnigate projects update NAME ${LIMIT_FLAGS_USAGE} [--clear FIELD,FIELD]
  omnigate projects list
  omnigate projects delete NAME
--clear takes rpm, tpm, max-parallel, media-units-per-day, budget, budget-period.`;

/** Each limit's flag and its field (`--budget` is `budget_usd`). */
const LIMIT_FLAGS = {
  rpm: 'rpm',
  tpm: 'tpm',
  'max-parallel': 'max_parallel',
  'media-units-per-day': 'media_units_per_day',
  budget: 'budget_usd',
} as const satisfies Record<string, keyof typeof LIMIT_FIELDS>;

const CLEARABLE: Record<string, keyof Limits | 'project'> = {
  rpm: 'rpm',
  tpm: 'tpm',
  'max-parallel': 'maxParallel',
  'media-units-per-day': 'mediaUnitsPerDay',
  budget: 'budgetUsd',
  'budget-period': 'budgetPeriod',
  project: 'project',
};

function parseKeysArguments(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      models: { type: 'string' },
      project: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      'max-parallel': { type: 'string' },
      'media-units-per-day': { type: 'string' },
      budget: { type: 'string' },
      'budget-period': { type: 'string' },
      clear: { type: 'string' },
      admin: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

type ParsedValues = ReturnType<typeof parseKeysArguments>['values'];

/** A usage error: said with the usage, exit code 2. */
class UsageError extends Error {}

/** The limits the flags give, and the fields `--clear` removes. A bad value throws a UsageError naming its flag. */
function limitsFromFlags(
  values: ParsedValues,
  clearable: (field: string) => boolean,
): { limits: Limits; cleared: Array<keyof Limits>; clearProject: boolean } {
  const limits: Limits = {};
  for (const [flag, field] of Object.entries(LIMIT_FLAGS)) {
    const text = values[flag as keyof typeof LIMIT_FLAGS];
    if (text === undefined) {
      continue;
    }
    // Number('') is 0 and Number('0x10') 16: only plain decimals are numbers here.
    const value = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : Number.NaN;
    try {
      const checked = checkLimitValue(field, Number.isNaN(value) && /^-\d/.test(text.trim()) ? -1 : value, `--${flag}`);
      (limits as Record<string, number>)[LIMIT_FIELDS[field].key] = checked;
    } catch (error) {
      if (error instanceof LimitValueError) {
        throw new UsageError(`${error.message} (got '${text}')`);
      }
      throw error;
    }
  }
  const period = values['budget-period'];
  if (period !== undefined) {
    if (period !== 'day' && period !== 'month' && period !== 'total') {
      throw new UsageError(`--budget-period must be one of day, month, total (got '${period}')`);
    }
    limits.budgetPeriod = period;
  }
  const cleared: Array<keyof Limits> = [];
  let clearProject = false;
  for (const name of (values.clear ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const field = CLEARABLE[name];
    if (!field || !clearable(name)) {
      throw new UsageError(`--clear does not know '${name}'`);
    }
    if (field === 'project') {
      clearProject = true;
    } else {
      cleared.push(field);
    }
  }
  return { limits, cleared, clearProject };
}

/** `rpm=60 budget=$5/day`, or '' for no limits. */
function describeLimits(limits: Limits | undefined): string {
  if (!limits) {
    return '';
  }
  const parts: string[] = [];
  for (const [flag, field] of Object.entries(LIMIT_FLAGS)) {
    const value = limits[LIMIT_FIELDS[field].key];
    if (value !== undefined) {
      parts.push(flag === 'budget' ? `budget=$${value}/${limits.budgetPeriod ?? 'month'}` : `${flag}=${value}`);
    }
  }
  return parts.join(' ');
}

function checkProjectName(name: string): void {
  if (!PROJECT_NAME.test(name)) {
    throw new UsageError(
      `--project must be letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit (got '${name}')`,
    );
  }
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
  const [command, target = ''] = positionals;
  if (values.help || command === 'help') {
    out(USAGE);
    out(`database: ${config.databasePath} (from OMNIGATE_DATA_DIR, default ./data; model names from OMNIGATE_CONFIG)`);
    return 0;
  }
  if (!(command === 'create' || command === 'list' || ((command === 'revoke' || command === 'update') && target))) {
    out(USAGE);
    return 2;
  }
  let flags: ReturnType<typeof limitsFromFlags>;
  try {
    if (values.project !== undefined) {
      checkProjectName(values.project);
    }
    flags = limitsFromFlags(values, (name) => command === 'update' || name !== 'project');
    if (command !== 'update' && values.clear !== undefined) {
      throw new UsageError('--clear is for keys update');
    }
    if (command === 'update' && values.admin) {
      throw new UsageError('--admin is given at create only (an admin key cannot become an API key, nor the reverse)');
    }
  } catch (error) {
    if (error instanceof UsageError) {
      out(`${error.message}\n${USAGE}`);
      return 2;
    }
    throw error;
  }
  const opened = await openKeyStores(config, out);
  if (!opened) {
    return 1;
  }
  const { keys, projects } = opened;
  try {
    if ((command === 'create' || command === 'update') && values.project && !(await projects.get(values.project))) {
      out(`no project named '${values.project}': create it first with omnigate projects create ${values.project}`);
      return 2;
    }
    if (command === 'update') {
      const matches = await keys.find(target);
      const [current] = matches;
      if (matches.length !== 1 || current === undefined) {
        out(matches.length > 1 ? `${target} is ambiguous: give the key's id` : `no active key matches ${target}`);
        return 1;
      }
      const updated = await keys.update(current.id, {
        name: values.name,
        project: flags.clearProject ? null : values.project,
        limits: mergeLimits(current.limits ?? {}, flags.limits, flags.cleared),
      });
      out(`updated ${current.id} (${updated?.name ?? current.name})${keyDetails(updated ?? current)}`);
      return 0;
    }
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
      const { key, record } = await keys.create({
        name: values.name ?? 'unnamed',
        allowedModels,
        project: values.project ?? null,
        limits: flags.limits,
        admin: values.admin ?? false,
      });
      out(
        `created ${record.id} (${record.name})${allowedModels.length ? ` for models ${allowedModels.join(', ')}` : ''}${keyDetails(record)}`,
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
        // Project, limits and the admin flag only where set: a plain key's line keeps its five columns.
        const extra = [
          record.project ? `project=${record.project}` : '',
          describeLimits(record.limits),
          record.admin ? 'admin' : '',
        ].filter(Boolean);
        out(
          [record.id, record.prefix ? `${record.prefix}…` : '(no prefix)', record.name, models, state, ...extra].join(
            '\t',
          ),
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
    const [match] = matches;
    if (matches.length === 1 && match !== undefined && (await keys.revoke(match.id))) {
      out(`revoked ${match.id} (${match.name})`);
      return 0;
    }
    out(`no active key matches ${shown}`);
    return 1;
  } finally {
    await opened.close();
  }
}

/** ` in project P, limits: …, admin`: what a created or updated key now is. */
function keyDetails(record: ApiKeyRecord): string {
  const limits = describeLimits(record.limits);
  return `${record.project ? ` in project ${record.project}` : ''}${limits ? `, limits: ${limits}` : ''}${record.admin ? ', admin key (admin API only)' : ''}`;
}

/** The key and project stores of the configured database (said which), or undefined when there is none yet. */
async function openKeyStores(
  config: KeysCommandConfig,
  out: (line: string) => void,
): Promise<{ keys: KeyStore; projects: ProjectStore; close(): Promise<void> | void } | undefined> {
  // With OMNIGATE_DATABASE_URL the keys are the PostgreSQL database's (the URL is not shown: it may hold a password).
  if (config.databaseUrl) {
    out('database: PostgreSQL (OMNIGATE_DATABASE_URL)');
    return openStores({
      kind: 'postgres',
      url: config.databaseUrl,
      dataDir: config.dataDir,
      pepperFile: config.pepperFile,
    });
  }
  return openSqliteKeys(config, out);
}

/**
 * `omnigate projects create|list|update|delete`: projects and their limits, on the database `keys` uses.
 * Exit codes as `keys`: 0 done, 1 nothing matched or no database, 2 a usage error.
 */
export async function runProjectsCommand(
  argv: string[],
  config: KeysCommandConfig,
  out: (line: string) => void,
): Promise<number> {
  let parsed: ReturnType<typeof parseKeysArguments>;
  try {
    parsed = parseKeysArguments(argv);
  } catch (error) {
    out(`${(error as Error).message}\n${PROJECTS_USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command = '', name = ''] = positionals;
  if (values.help || command === 'help') {
    out(PROJECTS_USAGE);
    return 0;
  }
  if (!(command === 'list' || (['create', 'update', 'delete'].includes(command) && name))) {
    out(PROJECTS_USAGE);
    return 2;
  }
  let flags: ReturnType<typeof limitsFromFlags>;
  try {
    if (values.name !== undefined || values.models !== undefined || values.project !== undefined || values.admin) {
      throw new UsageError('projects take limit flags only');
    }
    if (command !== 'list') {
      if (!PROJECT_NAME.test(name)) {
        throw new UsageError(
          `a project name is letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit (got '${name}')`,
        );
      }
    }
    flags = limitsFromFlags(values, (field) => command === 'update' && field !== 'project');
  } catch (error) {
    if (error instanceof UsageError) {
      out(`${error.message}\n${PROJECTS_USAGE}`);
      return 2;
    }
    throw error;
  }
  const opened = await openKeyStores(config, out);
  if (!opened) {
    return 1;
  }
  const { projects } = opened;
  try {
    if (command === 'list') {
      for (const project of await projects.list()) {
        out(`${project.name}\t${describeLimits(project.limits) || 'no limits'}`);
      }
      return 0;
    }
    if (command === 'create') {
      const created = await projects.create({ name, limits: flags.limits });
      if (!created) {
        out(`a project named '${name}' exists; change it with omnigate projects update ${name}`);
        return 1;
      }
      out(
        `created project ${name}${describeLimits(created.limits) ? `, limits: ${describeLimits(created.limits)}` : ''}`,
      );
      return 0;
    }
    const current = await projects.get(name);
    if (!current) {
      out(`no project named '${name}'`);
      return 1;
    }
    if (command === 'delete') {
      await projects.delete(name);
      out(`deleted project ${name} (its keys keep the name; its limits no longer apply)`);
      return 0;
    }
    const updated = await projects.update(name, mergeLimits(current.limits, flags.limits, flags.cleared));
    out(`updated project ${name}, limits: ${describeLimits(updated?.limits) || 'none'}`);
    return 0;
  } finally {
    await opened.close();
  }
}

/** The SQLite database's key and project stores, or undefined (said why) when there is no database yet. */
function openSqliteKeys(
  config: KeysCommandConfig,
  out: (line: string) => void,
): { keys: KeyStore; projects: ProjectStore; close(): void } | undefined {
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
    return { keys: createKeyStore(db, { pepper }), projects: createProjectStore(db), close: () => db.close() };
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The command as a process runs it: the environment's configuration, lines to stdout; returns the exit code. */
export async function keysMain(argv: string[], run: typeof runKeysCommand = runKeysCommand): Promise<number> {
  // Files this command creates (-wal/-shm, a pepper for a database from before peppers) stay private.
  process.umask(0o077);
  try {
    const config = loadConfig(process.env);
    return await run(argv, config, (line) => process.stdout.write(`${line}\n`));
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
