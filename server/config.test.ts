import { availableParallelism } from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfigFile } from './config.js';

function configFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-config-')), 'omnigate.yaml');
  writeFileSync(file, text);
  return file;
}

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig: environment', () => {
  it('has documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toEqual({
      port: 8080,
      host: '127.0.0.1',
      dataDir: path.resolve('./data'),
      databasePath: path.join(path.resolve('./data'), 'omnigate.sqlite'),
      apiKeys: [],
      logLevel: 'info',
      maxBodyBytes: 25 * 1024 * 1024,
      files: { maxFileBytes: 512 * 1024 * 1024, quotaBytes: 10 * 1024 * 1024 * 1024, quotaCount: 10_000 },
      transcription: { maxBytes: 25 * 1024 * 1024, maxSeconds: 1500 },
      indexLimits: {
        maxPages: 2000,
        maxDecompressedBytes: 128 * 1024 * 1024,
        maxCharacters: 16_000_000,
        budgetMs: 10_000,
      },
      shutdownGraceMs: 10_000,
      workers: 1,
      requestTimeoutMs: 60_000,
      headersTimeoutMs: 15_000,
      responseRetentionDays: 30,
      usageBufferMax: 100_000,
      warmUp: false,
      media: {
        workers: Math.max(1, Math.min(2, availableParallelism() - 1)),
        queueLimit: 16,
        perKeyLimit: 8,
        jobTimeoutMs: 120_000,
      },
      extractionPerKey: 100,
      videos: {
        concurrency: 1,
        leaseMs: 30_000,
        pollMs: 1_000,
        maxAttempts: 3,
        retentionSeconds: 86_400,
        attemptTimeoutMs: 1_800_000,
        maxActivePerKey: 10,
      },
      mediaLinkTtlSeconds: 3600,
      mcpAllowedOrigins: [],
      providers: [],
      models: [],
      aliases: {},
      routes: [],
      defaultChatModel: undefined,
      agentRoutes: true,
      circuitBreaker: { failure_threshold: 5, cooldown_ms: 30_000 },
      redisUrl: undefined,
      observability: {
        metrics: false,
        metricsPort: undefined,
        metricsPerKey: false,
        otlpEndpoint: undefined,
        traceContent: false,
      },
      limits: { defaults: {}, onStoreDown: 'allow', leaseMs: 300_000, redisUrl: undefined },
      prices: {},
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('turns metrics on with an admin key or a metrics port, off with OMNIGATE_METRICS=false, and refuses bad values', () => {
    expect(loadConfig({ OMNIGATE_ADMIN_KEY: ' og-admin-key ' })).toMatchObject({
      adminKey: 'og-admin-key',
      observability: { metrics: true },
    });
    expect(loadConfig({ OMNIGATE_METRICS_PORT: '9464' }).observability).toMatchObject({
      metrics: true,
      metricsPort: 9464,
    });
    expect(loadConfig({ OMNIGATE_ADMIN_KEY: 'k', OMNIGATE_METRICS: 'false' }).observability.metrics).toBe(false);
    expect(loadConfig({ OMNIGATE_WARM_UP: 'true' }).warmUp).toBe(true);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OMNIGATE_TRACE_CONTENT: 'true' })
        .observability,
    ).toMatchObject({ otlpEndpoint: 'http://127.0.0.1:4318', traceContent: true, metrics: false });
    expect(configError(() => loadConfig({ OMNIGATE_METRICS: 'yes' })).message).toBe(
      "OMNIGATE_METRICS must be true or false, got 'yes'",
    );
    expect(configError(() => loadConfig({ OMNIGATE_METRICS_PORT: '70000' })).message).toMatch(
      /^OMNIGATE_METRICS_PORT must be an integer/,
    );
  });

  it('reads the media pool, link lifetime and public URL, and refuses bad values naming the variable', () => {
    const config = loadConfig({
      OMNIGATE_MEDIA_WORKERS: '3',
      OMNIGATE_MEDIA_QUEUE: '0',
      OMNIGATE_MEDIA_TIMEOUT_MS: '5000',
      OMNIGATE_MEDIA_QUEUE_PER_KEY: '2',
      OMNIGATE_EXTRACTION_QUEUE_PER_KEY: '7',
      OMNIGATE_MEDIA_URL_TTL_SECONDS: '120',
      OMNIGATE_PUBLIC_URL: 'https://gateway.example.com/',
    });
    expect(config.media).toEqual({ workers: 3, queueLimit: 0, perKeyLimit: 2, jobTimeoutMs: 5000 });
    expect(config.extractionPerKey).toBe(7);
    expect(() => loadConfig({ OMNIGATE_MEDIA_QUEUE_PER_KEY: '0' })).toThrow(/OMNIGATE_MEDIA_QUEUE_PER_KEY/);
    expect(() => loadConfig({ OMNIGATE_EXTRACTION_QUEUE_PER_KEY: 'many' })).toThrow(
      /OMNIGATE_EXTRACTION_QUEUE_PER_KEY/,
    );
    expect(
      loadConfig({
        OMNIGATE_VIDEO_CONCURRENCY: '2',
        OMNIGATE_VIDEO_LEASE_MS: '2000',
        OMNIGATE_VIDEO_RETENTION_HOURS: '2',
        OMNIGATE_VIDEO_TIMEOUT_MS: '60000',
        OMNIGATE_VIDEO_TASKS_PER_KEY: '3',
      }).videos,
    ).toMatchObject({
      concurrency: 2,
      maxActivePerKey: 3,
      leaseMs: 2000,
      retentionSeconds: 7200,
      attemptTimeoutMs: 60_000,
    });
    expect(() => loadConfig({ OMNIGATE_VIDEO_LEASE_MS: '10' })).toThrow(/OMNIGATE_VIDEO_LEASE_MS/);
    expect(() => loadConfig({ OMNIGATE_VIDEO_TASKS_PER_KEY: '0' })).toThrow(/OMNIGATE_VIDEO_TASKS_PER_KEY/);
    expect(config.mediaLinkTtlSeconds).toBe(120);
    expect(config.publicUrl).toBe('https://gateway.example.com');
    expect(() => loadConfig({ OMNIGATE_MEDIA_WORKERS: '0' })).toThrow(/OMNIGATE_MEDIA_WORKERS/);
    expect(() => loadConfig({ OMNIGATE_MEDIA_URL_TTL_SECONDS: '10' })).toThrow(/OMNIGATE_MEDIA_URL_TTL_SECONDS/);
    expect(() => loadConfig({ OMNIGATE_PUBLIC_URL: 'ftp://x' })).toThrow(/OMNIGATE_PUBLIC_URL/);
    expect(() => loadConfig({ OMNIGATE_PUBLIC_URL: 'not a url' })).toThrow(/OMNIGATE_PUBLIC_URL/);
    expect(loadConfig({}).mcpAllowedOrigins).toEqual([]);
    expect(
      loadConfig({ OMNIGATE_MCP_ALLOWED_ORIGINS: 'https://app.example.com, http://intranet:8080' }).mcpAllowedOrigins,
    ).toEqual(['https://app.example.com', 'http://intranet:8080']);
    expect(() => loadConfig({ OMNIGATE_MCP_ALLOWED_ORIGINS: 'https://app.example.com/path' })).toThrow(
      /OMNIGATE_MCP_ALLOWED_ORIGINS/,
    );
    expect(() => loadConfig({ OMNIGATE_MCP_ALLOWED_ORIGINS: 'app.example.com' })).toThrow(
      /OMNIGATE_MCP_ALLOWED_ORIGINS/,
    );
  });

  it('reads PORT, HOST, OMNIGATE_DATA_DIR, LOG_LEVEL and the limits', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      OMNIGATE_DATA_DIR: 'var/omnigate',
      LOG_LEVEL: 'debug',
      OMNIGATE_MAX_BODY_BYTES: '4096',
      OMNIGATE_SHUTDOWN_GRACE_MS: '0',
      OMNIGATE_REQUEST_TIMEOUT_MS: '5000',
      OMNIGATE_HEADERS_TIMEOUT_MS: '2000',
      OMNIGATE_RESPONSE_RETENTION_DAYS: '1',
      OMNIGATE_WORKERS: '3',
    });
    expect(config).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      dataDir: path.resolve('var/omnigate'),
      databasePath: path.resolve('var/omnigate/omnigate.sqlite'),
      logLevel: 'debug',
      maxBodyBytes: 4096,
      shutdownGraceMs: 0,
      requestTimeoutMs: 5000,
      headersTimeoutMs: 2000,
      responseRetentionDays: 1,
      workers: 3,
    });
  });

  it('reads OMNIGATE_DATABASE_URL (PostgreSQL only, never echoed) and OMNIGATE_USAGE_RETENTION_DAYS', () => {
    expect(loadConfig({})).toMatchObject({ databaseUrl: undefined, usageRetentionDays: undefined });
    expect(
      loadConfig({
        OMNIGATE_DATABASE_URL: 'postgres://og:secret@db:5432/omnigate',
        OMNIGATE_USAGE_RETENTION_DAYS: '90',
      }),
    ).toMatchObject({ databaseUrl: 'postgres://og:secret@db:5432/omnigate', usageRetentionDays: 90 });
    expect(loadConfig({ OMNIGATE_DATABASE_URL: 'postgresql://db/omnigate' }).databaseUrl).toBe(
      'postgresql://db/omnigate',
    );
    const refusal = configError(() => loadConfig({ OMNIGATE_DATABASE_URL: 'mysql://og:secret@db/omnigate' }));
    expect(refusal.message).toBe('OMNIGATE_DATABASE_URL must be a postgres:// URL, got a mysql:// one');
    expect(configError(() => loadConfig({ OMNIGATE_USAGE_RETENTION_DAYS: '0' })).message).toBe(
      "OMNIGATE_USAGE_RETENTION_DAYS must be an integer from 1 to 36500, got '0'",
    );
  });

  it('runs one worker per core for OMNIGATE_WORKERS=auto', () => {
    expect(loadConfig({ OMNIGATE_WORKERS: 'auto' }).workers).toBe(availableParallelism());
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '', OMNIGATE_DATA_DIR: '', OMNIGATE_API_KEYS: '' })).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: path.resolve('./data'),
      apiKeys: [],
    });
  });

  it('splits OMNIGATE_API_KEYS on commas, trimming and dropping empty entries', () => {
    expect(loadConfig({ OMNIGATE_API_KEYS: ' og-one, og-two ,,og-three,' }).apiKeys).toEqual([
      'og-one',
      'og-two',
      'og-three',
    ]);
  });

  it.each([
    ['PORT', 'eighty', "PORT must be an integer from 0 to 65535, got 'eighty'"],
    ['PORT', '65536', "PORT must be an integer from 0 to 65535, got '65536'"],
    ['PORT', '80.5', "PORT must be an integer from 0 to 65535, got '80.5'"],
    ['OMNIGATE_MAX_BODY_BYTES', '100', "OMNIGATE_MAX_BODY_BYTES must be an integer from 1024 to 1073741824, got '100'"],
    ['OMNIGATE_SHUTDOWN_GRACE_MS', '-1', "OMNIGATE_SHUTDOWN_GRACE_MS must be an integer from 0 to 600000, got '-1'"],
    ['OMNIGATE_WORKERS', '0', "OMNIGATE_WORKERS must be 'auto' or an integer from 1 to 256, got '0'"],
    ['OMNIGATE_WORKERS', 'all', "OMNIGATE_WORKERS must be 'auto' or an integer from 1 to 256, got 'all'"],
    [
      'OMNIGATE_RESPONSE_RETENTION_DAYS',
      '0',
      "OMNIGATE_RESPONSE_RETENTION_DAYS must be an integer from 1 to 36500, got '0'",
    ],
    ['OMNIGATE_MAX_FILE_BYTES', '0', "OMNIGATE_MAX_FILE_BYTES must be an integer from 1 to 68719476736, got '0'"],
    [
      'OMNIGATE_FILE_QUOTA_BYTES',
      'lots',
      "OMNIGATE_FILE_QUOTA_BYTES must be an integer from 0 to 1125899906842624, got 'lots'",
    ],
    ['OMNIGATE_FILE_QUOTA_COUNT', '-1', "OMNIGATE_FILE_QUOTA_COUNT must be an integer from 0 to 10000000, got '-1'"],
    [
      'OMNIGATE_INDEX_TIME_BUDGET_MS',
      '60000',
      "OMNIGATE_INDEX_TIME_BUDGET_MS must be an integer from 100 to 20000, got '60000'",
    ],
    ['OMNIGATE_INDEX_MAX_PAGES', '0', "OMNIGATE_INDEX_MAX_PAGES must be an integer from 1 to 1000000, got '0'"],
  ])('refuses %s=%s with a ConfigError naming the variable', (name, value, message) => {
    expect(configError(() => loadConfig({ [name]: value })).message).toBe(message);
  });
});

describe('loadConfig: the YAML file', () => {
  it('reads providers, models, aliases and routes, filling defaults and interpolating ${ENV}', () => {
    const file = configFile(`
providers:
  openai:
    type: openai-compatible
    base_url: \${OPENAI_BASE}/v1
    api_key: \${OPENAI_KEY}
    headers:
      OpenAI-Organization: org-\${ORG}
  claude:
    type: anthropic
    api_key: \${ANTHROPIC_KEY}
    timeout_ms: 120000
models:
  - provider: openai
    model: gpt-4o-mini
    aliases: [fast]
  - provider: claude
    model: claude-sonnet-4-5
    id: sonnet-4.5
  - provider: local
    model: chat
    id: echo
aliases:
  quick: fast
routes:
  - pattern: gpt-*
    provider: openai
  - pattern: claude-*
    model: sonnet-4.5
default_chat_model: fast
`);
    const config = loadConfig({
      OMNIGATE_CONFIG: file,
      OPENAI_BASE: 'https://api.openai.com',
      OPENAI_KEY: 'sk-openai',
      ORG: 'acme',
      ANTHROPIC_KEY: 'sk-ant',
    });
    expect(config.providers).toEqual([
      {
        id: 'openai',
        type: 'openai-compatible',
        base_url: 'https://api.openai.com/v1',
        api_key: 'sk-openai',
        timeout_ms: 60_000,
        max_connections: 256,
        headers: { 'OpenAI-Organization': 'org-acme' },
        responses: 'translate',
      },
      {
        id: 'claude',
        type: 'anthropic',
        base_url: 'https://api.anthropic.com',
        api_key: 'sk-ant',
        timeout_ms: 120_000,
        max_connections: 256,
        headers: {},
        anthropic_version: '2023-06-01',
      },
    ]);
    expect(config.models).toMatchObject([
      { provider: 'openai', model: 'gpt-4o-mini', type: 'chat', aliases: ['fast'], resilient: false },
      { provider: 'claude', model: 'claude-sonnet-4-5', id: 'sonnet-4.5', type: 'chat', aliases: [] },
      { provider: 'local', model: 'chat', id: 'echo', type: 'chat', aliases: [] },
    ]);
    expect(config.aliases).toEqual({ quick: 'fast' });
    expect(config.routes).toEqual([
      { pattern: 'gpt-*', provider: 'openai' },
      { pattern: 'claude-*', model: 'sonnet-4.5' },
    ]);
    expect(config.defaultChatModel).toBe('fast');
  });

  it('accepts an empty file', () => {
    expect(loadConfig({ OMNIGATE_CONFIG: configFile('') })).toMatchObject({
      providers: [],
      models: [],
      aliases: {},
      routes: [],
    });
  });

  it('names the file, the field and the variable when a referenced environment variable is not set', () => {
    const file = configFile(
      'providers:\n  openai:\n    type: openai-compatible\n    base_url: https://api.openai.com/v1\n    api_key: ${OPENAI_KEY}\n',
    );
    expect(configError(() => loadConfig({ OMNIGATE_CONFIG: file })).message).toBe(
      `${file}: providers.openai.api_key: environment variable OPENAI_KEY is referenced but not set`,
    );
  });

  it('names the array index of a missing variable inside a list', () => {
    const error = configError(() =>
      parseConfigFile('models:\n  - provider: local\n    model: chat\n    aliases: [a, "${ALIAS}"]\n', {}),
    );
    expect(error.message).toBe('config: models[0].aliases[1]: environment variable ALIAS is referenced but not set');
  });

  it.each([
    [
      'a base_url that is not a URL',
      'providers:\n  openai:\n    type: openai-compatible\n    base_url: not a url\n',
      'omnigate.yaml: providers.openai.base_url: Invalid URL',
    ],
    [
      'a timeout that is not a number',
      'providers:\n  openai:\n    type: openai-compatible\n    base_url: https://x.test\n    timeout_ms: soon\n',
      'omnigate.yaml: providers.openai.timeout_ms: Invalid input: expected number, received string',
    ],
    [
      'an unknown provider type',
      'providers:\n  openai:\n    type: gemini\n    base_url: https://x.test\n',
      "omnigate.yaml: providers.openai.type: Invalid discriminator value. Expected 'openai-compatible' | 'anthropic' | 'searxng' | 'brave' | 'tavily'",
    ],
    [
      'a misspelt field',
      'models:\n  - provider: local\n    modle: chat\n',
      'omnigate.yaml: models.0: Unrecognized key: "modle"',
    ],
    [
      'a model type that does not exist',
      'models:\n  - provider: local\n    model: chat\n    type: telepathy\n',
      'omnigate.yaml: models.0.type: Invalid option: expected one of "chat"|"image"|"video"|"speech"|"music"|"search"|"vision"|"embedding"|"rerank"|"transcription"',
    ],
    [
      'an unknown search setting',
      'search:\n  embeding_model: local:embed\n',
      'omnigate.yaml: search: Unrecognized key: "embeding_model"',
    ],
    [
      'a model of an unknown provider',
      'models:\n  - provider: nowhere\n    model: chat\n',
      "omnigate.yaml: models.0.provider: unknown provider 'nowhere'",
    ],
    [
      'a route with both provider and model',
      'providers:\n  p:\n    type: openai-compatible\n    base_url: https://x.test\nroutes:\n  - pattern: x-*\n    provider: p\n    model: local:chat\n',
      'omnigate.yaml: routes.0: a route needs exactly one of provider or model',
    ],
    [
      'a route to an unknown provider',
      'routes:\n  - pattern: x-*\n    provider: nowhere\n',
      "omnigate.yaml: routes.0.provider: unknown provider 'nowhere'",
    ],
  ])('refuses %s with a ConfigError naming the field path', (_case, text, message) => {
    expect(configError(() => parseConfigFile(text, {}, 'omnigate.yaml')).message).toBe(message);
  });

  it('refuses a provider id with capitals, naming it', () => {
    const error = configError(() =>
      parseConfigFile(
        'providers:\n  OpenAI:\n    type: openai-compatible\n    base_url: https://x.test\n',
        {},
        'omnigate.yaml',
      ),
    );
    // zod 4 reports a bad record key as "Invalid key in record" and drops the schema's own message (see the report).
    expect(error.message).toMatch(/^omnigate\.yaml: providers\.OpenAI: /);
  });

  it('refuses text that is not YAML', () => {
    expect(configError(() => parseConfigFile('providers: [unclosed', {}, 'omnigate.yaml')).message).toMatch(
      /^omnigate\.yaml: not valid YAML: /,
    );
  });

  it('refuses an OMNIGATE_CONFIG that cannot be read, naming the variable and the path', () => {
    const missing = path.join(tmpdir(), 'omnigate-no-such-dir', 'config.yaml');
    expect(configError(() => loadConfig({ OMNIGATE_CONFIG: missing })).message).toMatch(
      new RegExp(`^OMNIGATE_CONFIG: cannot read ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOENT`),
    );
  });

  it('prefixes file errors with the file path when loading through OMNIGATE_CONFIG', () => {
    const file = configFile('providers:\n  openai:\n    type: openai-compatible\n    base_url: nope\n');
    expect(configError(() => loadConfig({ OMNIGATE_CONFIG: file })).message).toBe(
      `${file}: providers.openai.base_url: Invalid URL`,
    );
  });
});

describe('parseConfigFile: messages a person can act on', () => {
  it('says which characters a provider id may use', () => {
    expect(() =>
      parseConfigFile(
        'providers:\n  OpenAI:\n    type: openai-compatible\n    base_url: http://127.0.0.1:1/v1\n',
        {},
        'my.yaml',
      ),
    ).toThrow('my.yaml: providers.OpenAI: invalid name: provider ids are lower-case letters, digits, - and _');
  });

  it('names the file when an environment variable is missing', () => {
    expect(() =>
      parseConfigFile('providers:\n  a:\n    type: anthropic\n    api_key: ${NOPE_NOT_SET}\n', {}, 'my.yaml'),
    ).toThrow('my.yaml: providers.a.api_key: environment variable NOPE_NOT_SET is referenced but not set');
  });

  it('does not take a prototype member for a provider', () => {
    expect(() => parseConfigFile('models:\n  - provider: constructor\n    model: x\n', {}, 'my.yaml')).toThrow(
      "models.0.provider: unknown provider 'constructor'",
    );
  });
});

describe('loadConfig: web search providers', () => {
  it('gives Brave and Tavily their public base URLs, needs their keys, and reads default_search_model', () => {
    const file = parseConfigFile(
      'providers:\n  brave:\n    type: brave\n    api_key: b-key\n  tavily:\n    type: tavily\n    api_key: tvly-key\n  searx:\n    type: searxng\n    base_url: http://127.0.0.1:8888\nmodels:\n  - provider: searx\n    model: web\n    type: search\ndefault_search_model: searx:web\n',
      {},
    );
    expect(file.providers.brave).toMatchObject({
      type: 'brave',
      base_url: 'https://api.search.brave.com/res/v1',
      timeout_ms: 15_000,
    });
    expect(file.providers.tavily).toMatchObject({ type: 'tavily', base_url: 'https://api.tavily.com' });
    expect(file.default_search_model).toBe('searx:web');
    expect(() => parseConfigFile('providers:\n  brave:\n    type: brave\n', {}, 'omnigate.yaml')).toThrow(
      /providers\.brave\.api_key/,
    );
    expect(() => parseConfigFile('providers:\n  searx:\n    type: searxng\n', {}, 'omnigate.yaml')).toThrow(
      /providers\.searx\.base_url/,
    );
  });

  describe('limits and prices', () => {
    const read = (yaml: string) => parseConfigFile(yaml, {}, 'omnigate.yaml');

    it.each([
      ['negative', 'limits:\n  rpm: -1\n', /limits\.rpm/],
      ['non-numeric', 'limits:\n  tpm: lots\n', /limits\.tpm/],
      ['huge', 'limits:\n  max_parallel: 10000000000\n', /limits\.max_parallel/],
      ['a fraction of a request', 'limits:\n  rpm: 1.5\n', /limits\.rpm/],
      ['a negative budget', 'limits:\n  budget_usd: -5\n', /limits\.budget_usd/],
      ['an infinite rate', 'limits:\n  tpm: .inf\n', /limits\.tpm/],
      ['a number written as a string', "limits:\n  rpm: '30'\n", /limits\.rpm/],
      ['a huge budget', 'limits:\n  budget_usd: 1e300\n', /limits\.budget_usd/],
      ['a negative media allowance', 'limits:\n  media_units_per_day: -1\n', /limits\.media_units_per_day/],
      ['a lease shorter than a call can renew', 'limits:\n  lease_seconds: 1\n', /limits\.lease_seconds/],
      ['an unknown period', 'limits:\n  budget_period: week\n', /limits\.budget_period/],
      ['an unknown store-down rule', 'limits:\n  on_store_down: maybe\n', /limits\.on_store_down/],
      ['a negative price', 'prices:\n  "x:y":\n    input: -1\n', /prices\.x:y\.input/],
      ['a price in words', 'prices:\n  "x:y":\n    output: cheap\n', /prices\.x:y\.output/],
    ])('refuses %s, naming the field', (_name, yaml, field) => {
      expect(() => read(yaml)).toThrow(field);
    });

    it("reads the defaults, the store-down rule and the prices (a model entry's own price under its id and aliases)", () => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-limits-')), 'omnigate.yaml');
      writeFileSync(
        file,
        [
          'providers:',
          '  up: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }',
          'models:',
          '  - { provider: up, model: m1, aliases: [cheap], price: { input: 1, output: 2 } }',
          'prices:',
          '  "local:image": { image: 0.5 }',
          'limits: { rpm: 30, budget_usd: 0.01, budget_period: day, on_store_down: deny, lease_seconds: 60 }',
        ].join('\n'),
      );
      const config = loadConfig({ OMNIGATE_CONFIG: file, OMNIGATE_REDIS_URL: 'redis://127.0.0.1:6379' });
      expect(config.limits).toEqual({
        defaults: { rpm: 30, budgetUsd: 0.01, budgetPeriod: 'day' },
        onStoreDown: 'deny',
        leaseMs: 60_000,
        redisUrl: 'redis://127.0.0.1:6379',
      });
      expect(config.prices).toEqual({
        'local:image': { image: 0.5 },
        'up:m1': { input: 1, output: 2 },
        cheap: { input: 1, output: 2 },
      });
    });

    it('refuses a Redis URL of another scheme', () => {
      expect(() => loadConfig({ OMNIGATE_REDIS_URL: 'http://127.0.0.1:6379' })).toThrow(/OMNIGATE_REDIS_URL/);
    });
  });
});

describe('parseConfigFile: deployments, retries and fallbacks', () => {
  const providers = `providers:
  east: { type: openai-compatible, base_url: 'http://127.0.0.1:9001/v1', first_byte_timeout_ms: 2000, idle_timeout_ms: 5000 }
  west: { type: openai-compatible, base_url: 'http://127.0.0.1:9002/v1' }
`;

  it('reads deployments with their defaults; a model given the old way is one deployment outside the retry layer', () => {
    const file = parseConfigFile(
      `${providers}circuit_breaker: { failure_threshold: 3, cooldown_ms: 10000 }
models:
  - id: smart
    deployments:
      - { provider: east, model: gpt-4o, weight: 3 }
      - { provider: west, model: gpt-4o }
    fallbacks: [west:gpt-4o-mini]
    context_window_fallbacks: [west:gpt-4.1]
  - provider: east
    model: plain
`,
      {},
    );
    expect(file.providers.east).toMatchObject({
      first_byte_timeout_ms: 2000,
      idle_timeout_ms: 5000,
      timeout_ms: 60_000,
    });
    expect(file.circuit_breaker).toEqual({ failure_threshold: 3, cooldown_ms: 10_000 });
    expect(file.models[0]).toMatchObject({
      id: 'smart',
      provider: 'east',
      model: 'gpt-4o',
      strategy: 'weighted',
      retries: 2,
      resilient: true,
      fallbacks: ['west:gpt-4o-mini'],
      context_window_fallbacks: ['west:gpt-4.1'],
      deployments: [
        { id: 'east:gpt-4o', provider: 'east', model: 'gpt-4o', weight: 3 },
        { id: 'west:gpt-4o', provider: 'west', model: 'gpt-4o', weight: 1 },
      ],
    });
    expect(file.models[1]).toMatchObject({ provider: 'east', model: 'plain', retries: 0, resilient: false });
  });

  it('refuses a bad entry with a message naming the field', () => {
    const refuse = (models: string) => () => parseConfigFile(`${providers}models:\n${models}`, {}, 'omnigate.yaml');
    expect(refuse('  - deployments: [{ provider: east, model: a }]\n')).toThrow(
      /omnigate\.yaml: models\.0\.id: a model with deployments needs an id/,
    );
    expect(refuse('  - id: x\n    deployments: [{ provider: north, model: a }]\n')).toThrow(
      /models\.0\.deployments\.0\.provider: unknown provider 'north'/,
    );
    expect(
      refuse('  - id: x\n    provider: east\n    model: a\n    deployments: [{ provider: east, model: a }]\n'),
    ).toThrow(/models\.0: give either provider and model, or deployments/);
    expect(
      refuse('  - id: x\n    deployments: [{ provider: east, model: a }, { provider: east, model: a }]\n'),
    ).toThrow(/models\.0\.deployments\.1\.id: the deployment 'east:a' is listed twice/);
    expect(refuse('  - id: x\n    strategy: fastest\n    deployments: [{ provider: east, model: a }]\n')).toThrow(
      /models\.0\.strategy/,
    );
    expect(refuse('  - id: x\n    retries: -1\n    deployments: [{ provider: east, model: a }]\n')).toThrow(
      /models\.0\.retries/,
    );
    expect(refuse('  - id: x\n    deployments: [{ provider: east, model: a, weight: 0 }]\n')).toThrow(
      /models\.0\.deployments\.0\.weight/,
    );
    expect(refuse('  - id: x\n    deployments: []\n')).toThrow(/models\.0\.deployments/);
    expect(refuse('  - model: a\n')).toThrow(/models\.0: a model needs provider and model, or deployments/);
  });
});
