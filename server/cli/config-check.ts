/**
 * `omnigate config check FILE`: validates a configuration file exactly as `omnigate start` would (schema,
 * `${ENV}` references, aliases and routes resolved by the registry the server builds) and prints the
 * configuration as it takes effect — built-in models and agent routes included — with every secret masked.
 * Exit 0 when valid, 78 (EX_CONFIG, as the server) when not.
 */
import { ConfigError, loadConfig } from '../config.js';
import { buildRegistry } from '../providers/build-registry.js';
import { stringify } from 'yaml';

/** Header names whose values are credentials (sent to an upstream as configured). */
const SECRET_HEADER = /authorization|api[-_]?key|token|secret|cookie/i;

function mask(secret: string): string {
  return secret.length <= 8 ? '***' : `${secret.slice(0, 3)}***`;
}

export function checkConfigCommand(file: string, env: NodeJS.ProcessEnv, out: (line: string) => void, err: (line: string) => void): number {
  try {
    const config = loadConfig({ ...env, OMNIGATE_CONFIG: file });
    const registry = buildRegistry(config);
    const effective = {
      providers: Object.fromEntries(
        config.providers.map(({ id, api_key: apiKey, headers, ...rest }) => [
          id,
          {
            ...rest,
            ...(apiKey ? { api_key: mask(apiKey) } : {}),
            headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, SECRET_HEADER.test(name) ? mask(value) : value])),
          },
        ]),
      ),
      models: registry.list().map((model) => ({ id: model.id, type: model.type, provider: model.provider, model: model.upstreamModel, aliases: model.aliases })),
      routes: registry.routes(),
    };
    out(`${file}: valid`);
    out(stringify(effective).trimEnd());
    void registry.close();
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      err(`omnigate: configuration error: ${error.message.startsWith(file) ? '' : `${file}: `}${error.message}`);
      return 78;
    }
    throw error;
  }
}
