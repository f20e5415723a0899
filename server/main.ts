/**
 * The process entry point (`npm start`): reads the environment, checks the contract, opens the services on the
 * data directory (services.ts), registers keys, listens, and shuts down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight
 * work, flush usage, exit 0). The only module besides config.ts that touches process.env.
 *
 * With `OMNIGATE_WORKERS` (`omnigate start --workers N`) above 1 this process becomes the cluster's primary
 * (cluster/primary.ts): it opens the stores once before forking — so the schema, its migrations and the pepper
 * are made by one process, never raced by N — registers the keys of OMNIGATE_API_KEYS, forks the workers
 * (which run this same module and take the single-server path, minus those steps), and prints the welcome
 * once all listen.
 */
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, warmUpValidator } from './app.js';
import { createAppServer } from './http/app-server.js';
import { keyWeaknesses } from './auth/key-strength.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, stdoutLog } from './logger.js';
import type { ModelRegistry } from './providers/registry.js';
import { openServices, openStores, type Services, type StoreLocation } from './services.js';
import type { KeyStore } from './storage/key-store.js';
import { runPrimary, WORKER_INDEX_VARIABLE } from './cluster/primary.js';
import { START_USAGE, startWorkers } from './cli/start-args.js';
import { loadCheckedSpec } from './spec/spec-thread.js';
import { sendEncoderWarningsTo } from './tokens/encoder-client.js';
import { welcomeMessage } from './welcome-message.js';
import { adminKeyCheck } from './auth/admin-key.js';
import { installObserver } from './observability/hooks.js';
import { createReadiness } from './observability/readiness.js';
import { readinessChecks } from './readiness-checks.js';

const DOCS_PATH = fileURLToPath(new URL('../docs/index.html', import.meta.url));
const CONSOLE_DIR = fileURLToPath(new URL('../console/dist', import.meta.url));
const VERSION = '1.0.0';
/** During shutdown, how often connections that fell idle are closed. */
const IDLE_SWEEP_MS = 100;
/** How often Node checks the headers and request deadlines of open connections. */
const CONNECTIONS_CHECK_MS = 1_000;
/** After the grace period, how long aborted requests get to end their responses before connections are cut. */
const FORCE_CLOSE_MS = 2_000;

async function main(): Promise<void> {
  // `npm start -- --workers 2` passes its flag here (`omnigate start --workers 2` sets OMNIGATE_WORKERS itself).
  if (cluster.isPrimary && process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    const workers = startWorkers(process.argv.slice(2));
    if (workers === null) {
      process.stderr.write(`omnigate: unknown arguments '${process.argv.slice(2).join(' ')}'; usage: ${START_USAGE}\n`);
      process.exit(2);
    }
    if (workers !== undefined) {
      process.env.OMNIGATE_WORKERS = workers;
    }
  }
  let config: Readonly<Config>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`omnigate: configuration error: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const rootLogger = createLogger(config.logLevel, stdoutLog());
  // Everything this process writes (database, -wal/-shm, pepper, blobs) is readable by its owner only.
  process.umask(0o077);
  if (cluster.isPrimary && config.workers > 1) {
    process.exit(await runCluster(config, rootLogger));
  }
  // A worker's lines (access lines included) name it, so an operator can tell the processes apart.
  const workerIndex = cluster.isWorker ? Number(process.env[WORKER_INDEX_VARIABLE] ?? cluster.worker?.id) : undefined;
  const logger = workerIndex === undefined ? rootLogger : rootLogger.child({ worker: workerIndex, pid: process.pid });
  // Token counts that fall back to a rough estimate (the tokenizer thread died or lagged) are logged here.
  sendEncoderWarningsTo(logger);
  // In a thread while the stores open: a broken contract still stops the start (below), before anything listens.
  const loadingSpec = loadCheckedSpec();
  loadingSpec.catch(() => undefined); // awaited below; a configuration error may exit first

  let services: Services;
  try {
    services = await openServices(config, {
      logger,
      stores: storeLocation(config, logger),
      // One worker of a cluster purges expired responses and media for all (they share the database).
      purge: workerIndex === undefined || workerIndex === 0,
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      // An alias or route naming a model that does not exist: a configuration error like any other.
      process.stderr.write(
        `omnigate: configuration error: ${config.configPath ? `${config.configPath}: ` : ''}${error.message}\n`,
      );
      process.exit(78);
    }
    throw error;
  }
  const spec = await loadingSpec;
  const { keys, registry } = services.appDeps;
  if (workerIndex === undefined) {
    // A cluster's primary registered them before forking.
    await registerEnvironmentKeys(config, keys, logger);
  }
  const draining = new AbortController();
  const shutdown = new AbortController();
  const observability = await startObservability(config, logger, registry, {
    mediaPool: services.mediaPool,
    usage: services.usage,
    videoTasks: services.stores.videoTasks,
  });
  const readiness = readinessChecks(config, registry, () => services.stores.problem());
  if (config.adminKey && workerIndex === undefined && keyWeaknesses(config.adminKey).length > 0) {
    logger.warn({ weaknesses: keyWeaknesses(config.adminKey) }, 'weak OMNIGATE_ADMIN_KEY: use a long random key');
  }
  const app = createApp({
    ...services.appDeps,
    spec,
    tools: { mcpAllowedOrigins: config.mcpAllowedOrigins },
    maxBodyBytes: config.maxBodyBytes,
    docsPath: existsSync(DOCS_PATH) ? DOCS_PATH : undefined,
    consoleDir: existsSync(path.join(CONSOLE_DIR, 'index.html')) ? CONSOLE_DIR : undefined,
    version: VERSION,
    drainingSignal: draining.signal,
    shutdownSignal: shutdown.signal,
    adminKey: adminKeyCheck(config.adminKey),
    metrics: observability.metrics,
    readiness: createReadiness(readiness.checks),
  });
  if (config.warmUp) {
    // The contract validator's code for every JSON operation, built before listening rather than on each
    // operation's first call (http/validator-warm-up.ts), which held the event loop for that caller and all others.
    const [startedAt, cpuBefore] = [performance.now(), process.cpuUsage()];
    const { operations } = await warmUpValidator(app);
    const cpu = process.cpuUsage(cpuBefore);
    const [ms, cpuMs] = [performance.now() - startedAt, (cpu.user + cpu.system) / 1000].map(Math.round);
    logger.info({ operations, ms, cpuMs }, 'validator built');
  }

  const server: Server = createAppServer(app, {
    // A client that never finishes its headers or body (a lying Content-Length, an endless chunked body) is
    // cut off instead of holding a socket; Node checks these deadlines every CONNECTIONS_CHECK_MS.
    headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
    requestTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    keepAliveTimeout: 65_000,
  });
  server.once('error', (error: NodeJS.ErrnoException) => {
    // A port already taken (EADDRINUSE), a host that does not resolve or is not ours: say so and stop,
    // rather than run without listening.
    process.stderr.write(`omnigate: cannot listen on ${config.host}:${config.port}: ${error.code ?? error.message}\n`);
    process.exit(1);
  });
  server.listen(config.port, config.host, async () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    if (workerIndex !== undefined) {
      // The primary greets (and makes the first key) once every worker listens.
      logger.info({ port, models: registry.list().map((m) => m.id) }, 'worker listening');
      return;
    }
    // The first key is made only once the server listens: if it could not, a key printed before would be lost
    // with the failed start, and never shown again.
    let generatedKey: string | undefined;
    try {
      generatedKey =
        (await keys.count()) === 0 ? (await keys.create({ name: 'generated-at-first-start' })).key : undefined;
    } catch (error) {
      logger.error({ err: error }, 'making the first API key failed');
    }
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    process.stdout.write(
      welcomeMessage({ url: `http://${host}:${port}`, dataDir: config.dataDir, version: VERSION, generatedKey }),
    );
    logger.info(
      {
        host: config.host,
        port,
        dataDir: config.dataDir,
        blobs: services.stores.blobLocation,
        models: registry.list().map((m) => m.id),
      },
      'omnigate listening',
    );
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    draining.abort();
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    // Running video tasks get the same grace period; those still running then go back to the queue.
    void services.stopVideos(config.shutdownGraceMs);
    // Once the listener has closed: the services close in their order (services.ts), after the video tasks.
    server.close(async () => {
      await services.close();
      await readiness.close();
      observability.metricsServer?.close();
      // Spans still batched are exported before the process ends.
      await observability.tracing?.shutdown().catch(() => undefined);
      logger.info('stopped');
      process.exit(0);
    });
    // server.close() only closes the connections idle at this moment; a keep-alive connection whose response
    // finishes later would hold the process until its client drops it. Close connections as they fall idle.
    server.closeIdleConnections();
    setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS).unref();
    // Requests still running after the grace period (long streams) are told to stop: they end their responses
    // and queue their usage records themselves, before their connections close and the queue is flushed.
    // Connections that still hang on after that are cut.
    setTimeout(() => {
      shutdown.abort(new Error('server shutting down'));
      setTimeout(() => server.closeAllConnections(), FORCE_CLOSE_MS).unref();
    }, config.shutdownGraceMs).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Registers the keys of OMNIGATE_API_KEYS (idempotent), warning of weak ones by position, never by value. */
async function registerEnvironmentKeys(
  config: Readonly<Config>,
  keys: KeyStore,
  logger: ReturnType<typeof createLogger>,
): Promise<void> {
  for (const [index, secret] of config.apiKeys.entries()) {
    const name = `env-${index + 1}`;
    const weaknesses = keyWeaknesses(secret);
    if (weaknesses.length > 0) {
      // Named by position, never shown: the log must not hold the key.
      logger.warn(
        { key: name, weaknesses },
        'weak API key in OMNIGATE_API_KEYS: use a long random key (npm run keys -- create)',
      );
    }
    await keys.ensure(secret, name);
  }
}

/** Where the stores live, from the configuration: PostgreSQL when OMNIGATE_DATABASE_URL is set, else the data directory. */
function storeLocation(config: Readonly<Config>, logger: ReturnType<typeof createLogger>): StoreLocation {
  return config.databaseUrl
    ? {
        kind: 'postgres',
        url: config.databaseUrl,
        dataDir: config.dataDir,
        logger,
        blobs: config.blobLocation,
        pepperFile: config.pepperFile,
      }
    : {
        kind: 'data-dir',
        dataDir: config.dataDir,
        databasePath: config.databasePath,
        blobs: config.blobLocation,
        pepperFile: config.pepperFile,
      };
}

/**
 * The primary of `--workers N`: opens the stores once (schema, migrations, pepper: made here, before any worker
 * opens the file), registers the environment's keys, then runs the workers (cluster/primary.ts). Once all
 * listen it makes the first-start key if none exists and prints the welcome, as a single server does.
 */
async function runCluster(config: Readonly<Config>, logger: ReturnType<typeof createLogger>): Promise<number> {
  const stores = await openStores(storeLocation(config, logger));
  try {
    await registerEnvironmentKeys(config, stores.keys, logger);
    if (config.adminKey && keyWeaknesses(config.adminKey).length > 0) {
      logger.warn({ weaknesses: keyWeaknesses(config.adminKey) }, 'weak OMNIGATE_ADMIN_KEY: use a long random key');
    }
  } catch (error) {
    await stores.close();
    throw error;
  }
  let open = true;
  const closeStores = async () => {
    if (open) {
      open = false;
      await stores.close();
    }
  };
  if (config.observability.metrics) {
    (await import('./observability/cluster-metrics.js')).serveClusterMetrics();
  }
  const code = await runPrimary({
    workers: config.workers,
    metricsPort: config.observability.metrics ? config.observability.metricsPort : undefined,
    exec: fileURLToPath(import.meta.url),
    logger,
    shutdownGraceMs: config.shutdownGraceMs,
    onListening: async (port, pids) => {
      let generatedKey: string | undefined;
      try {
        generatedKey =
          (await stores.keys.count()) === 0
            ? (await stores.keys.create({ name: 'generated-at-first-start' })).key
            : undefined;
      } catch (error) {
        logger.error({ err: error }, 'making the first API key failed');
      }
      await closeStores();
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      process.stdout.write(
        welcomeMessage({ url: `http://${host}:${port}`, dataDir: config.dataDir, version: VERSION, generatedKey }),
      );
      logger.info(
        { host: config.host, port, dataDir: config.dataDir, workers: config.workers, pids },
        'omnigate listening',
      );
    },
  });
  await closeStores();
  logger.info({ code }, 'stopped');
  return code;
}

/**
 * Metrics and traces, each loaded (dynamic import) only when configured, so a gateway without them loads
 * neither prom-client nor OpenTelemetry.
 */
async function startObservability(
  config: Readonly<Config>,
  logger: ReturnType<typeof createLogger>,
  registry: ModelRegistry,
  sources: { mediaPool: Services['mediaPool']; usage: Services['usage']; videoTasks: Services['stores']['videoTasks'] },
) {
  const settings = config.observability;
  let metrics: import('./observability/metrics.js').Metrics | undefined;
  let metricsServer: Server | undefined;
  if (settings.metrics) {
    const { createMetrics } = await import('./observability/metrics.js');
    // A worker of --workers N answers a scrape with every worker's metrics, which the primary gathers.
    const clusterRender = cluster.isWorker
      ? (await import('./observability/cluster-metrics.js')).clusterRender
      : undefined;
    metrics = createMetrics({
      clusterRender,
      models: registry.list().map((model) => model.id),
      providers: ['local', ...config.providers.map((provider) => provider.id)],
      perKey: settings.metricsPerKey,
      // The configured deployments: a bounded label (a fallback outside them counts as `other`).
      deployments: [
        ...new Set(
          registry.list().flatMap((model) => model.resilience?.deployments.map((deployment) => deployment.id) ?? []),
        ),
      ],
      sources: {
        mediaPool: () => sources.mediaPool.stats(),
        usage: () => sources.usage.stats(),
        videoTasks: () => sources.videoTasks.countByStatus(),
      },
    });
    installObserver('metrics', metrics.observer);
    if (settings.metricsPort !== undefined) {
      const { startMetricsServer } = await import('./observability/metrics-server.js');
      metricsServer = startMetricsServer(
        metrics,
        { port: settings.metricsPort, host: config.host },
        (port) => logger.info({ host: config.host, port }, 'metrics listening'),
        (error) => {
          process.stderr.write(
            `omnigate: cannot listen for metrics on ${config.host}:${settings.metricsPort}: ${error.code ?? error.message}\n`,
          );
          process.exit(1);
        },
      );
    }
  }
  let tracing: import('./observability/tracing.js').Tracing | undefined;
  if (settings.otlpEndpoint) {
    const { startTracing } = await import('./observability/tracing.js');
    tracing = startTracing({
      serviceName: process.env.OTEL_SERVICE_NAME || 'omnigate',
      version: VERSION,
      traceContent: settings.traceContent,
    });
    installObserver('tracing', tracing.observer);
    logger.info({ endpoint: settings.otlpEndpoint, content: settings.traceContent }, 'exporting traces over OTLP/HTTP');
  }
  return { metrics, metricsServer, tracing };
}

main().catch((error: unknown) => {
  process.stderr.write(`omnigate: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
