/**
 * `omnigate config check FILE`: validates a configuration file exactly as `omnigate start` would (schema,
 * `${ENV}` references, then the services built from it by the server's own composition root, services.ts:
 * aliases and routes resolved by the registry, stores, pools and the video runner made and closed again) and
 * prints the configuration as it takes effect — built-in models and agent routes included — with every secret masked.
 * Exit 0 when valid, 78 (EX_CONFIG, as the server) when not.
 */
import { stringify } from 'yaml';
import { ConfigError, loadConfig, type Config } from '../config.js';
import type { ModelRegistry } from '../providers/registry.js';
import { createLogger } from '../logger.js';
import { openServices } from '../services.js';

/** Header names whose values are credentials (sent to an upstream as configured). */
const SECRET_HEADER = /authorization|api[-_]?key|token|secret|cookie/i;

function mask(secret: string): string {
  return secret.length <= 8 ? '***' : `${secret.slice(0, 3)}***`;
}

/** The configuration as it takes effect: providers with their secrets masked, every model, every route. */
function effectiveConfig(config: Readonly<Config>, registry: ModelRegistry) {
  return {
    providers: Object.fromEntries(
      config.providers.map(({ id, api_key: apiKey, headers, ...rest }) => [
        id,
        {
          ...rest,
          ...(apiKey ? { api_key: mask(apiKey) } : {}),
          headers: Object.fromEntries(
            Object.entries(headers).map(([name, value]) => [name, SECRET_HEADER.test(name) ? mask(value) : value]),
          ),
        },
      ]),
    ),
    models: registry.list().map((model) => ({
      id: model.id,
      type: model.type,
      provider: model.provider,
      model: model.upstreamModel,
      aliases: model.aliases,
    })),
    routes: registry.routes(),
  };
}

export async function checkConfigCommand(
  file: string,
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  try {
    const config = loadConfig({ ...env, OMNIGATE_CONFIG: file });
    // In memory: a check neither creates nor touches the data directory (it may run elsewhere, as another user),
    // and it listens on nothing. The services log nothing here; what they would refuse, they throw.
    // The pepper file is read, as the server would read it: a missing or short one is this check's error too.
    // Nor does it connect to the limits' Redis: the counters are a running server's.
    const services = await openServices(
      { ...config, limits: { ...config.limits, redisUrl: undefined } },
      {
        logger: createLogger('silent'),
        stores: { kind: 'memory', pepperFile: config.pepperFile },
      },
    );
    try {
      out(`${file}: valid`);
      out(stringify(effectiveConfig(config, services.registry)).trimEnd());
      return 0;
    } finally {
      await services.close();
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      err(`omnigate: configuration error: ${error.message.startsWith(file) ? '' : `${file}: `}${error.message}`);
      return 78;
    }
    throw error;
  }
}
