/**
 * The `omnigate` command (package.json `bin`): `start`, `keys …`, `config check FILE`, `--help`, `--version`.
 * `npm start` and `npm run keys` run the same code; this is the one name a user needs.
 */
import { readFileSync } from 'node:fs';
import { checkConfigCommand } from './config-check.js';
import { keysMain, runProjectsCommand } from './keys.js';
import { startWorkers } from './start-args.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const USAGE = `omnigate ${VERSION}: one API for language models, media, search, files, tools and MCP

usage:
  omnigate start [--workers N|auto]   serve (PORT, HOST, OMNIGATE_DATA_DIR, OMNIGATE_CONFIG, … from the environment);
                                      --workers: N processes on one port (auto: one per core; OMNIGATE_WORKERS)
  omnigate keys create [--name NAME] [--models MODEL,MODEL] [--project NAME] [limits] [--admin]
  omnigate keys update KEY_ID [--name NAME] [--project NAME] [limits] [--clear FIELD,FIELD]
  omnigate keys list
  omnigate keys revoke KEY_ID_OR_PREFIX
  omnigate projects create|update NAME [limits]   (update also takes --clear FIELD,FIELD)
  omnigate projects list | delete NAME
                                      limits: --rpm N --tpm N --max-parallel N --media-units-per-day N
                                      --budget USD --budget-period day|month|total
  omnigate config check FILE          validate a configuration file and print it as it takes effect (secrets masked)
  omnigate --help | --version

The README describes every variable; the API reference is served at /docs.`;

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      const workers = startWorkers(rest);
      if (workers === null) {
        process.stderr.write(`${USAGE}\n`);
        return 2;
      }
      if (workers !== undefined) {
        // The server reads its settings from the environment; the flag wins over a value already there.
        process.env.OMNIGATE_WORKERS = workers;
      }
      // As `npm start` does: build the /docs page and the /console files if missing or stale (its prestart step), then load
      // main.ts, which starts the server when it is loaded.
      await import('../../scripts/ensure-docs.mjs');
      (await import('../../scripts/ensure-console.mjs')).ensureConsole();
      await import('../main.js');
      return 0;
    }
    case 'keys':
      return keysMain(rest);
    case 'projects':
      return keysMain(rest, runProjectsCommand);
    case 'config':
      if (rest[0] === 'check' && rest.length === 2) {
        return checkConfigCommand(
          rest[1]!, // length 2
          process.env,
          (line) => process.stdout.write(`${line}\n`),
          (line) => process.stderr.write(`${line}\n`),
        );
      }
      process.stderr.write(`${USAGE}\n`);
      return 2;
    case '--version':
    case '-v':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      process.stderr.write(`omnigate: unknown command '${command}'\n\n${USAGE}\n`);
      return 2;
  }
}

process.exitCode = await run(process.argv.slice(2));
