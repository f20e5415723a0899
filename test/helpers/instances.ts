/**
 * Several Omnigate instances as separate processes (the compiled server, spawn-server.ts), as a scaled-out
 * deployment runs them: each with a data directory of its own unless a test shares one, all given the same
 * `shared` environment (OMNIGATE_DATABASE_URL, OMNIGATE_REDIS_URL, OMNIGATE_PEPPER_FILE, OMNIGATE_BLOB_URL …).
 * An instance can be stopped (SIGTERM, graceful) or killed (SIGKILL, as a machine that dies). Instances start
 * one after the other, each once the previous listens. `killServers()` (spawn-server.ts) in `afterEach` ends any
 * a test leaves running.
 */
import { request as httpRequest } from 'node:http';
import { dataDir as makeDataDir, startServer, type Started } from './spawn-server.js';

export interface InstanceSetup {
  /** How many instances; 2 by default. */
  count?: number;
  /** The environment every instance is given. */
  shared?: Record<string, string>;
  /** One data directory for all of them (one SQLite file); by default each has its own. */
  sharedDataDir?: string;
  /** The environment of instance `index` alone, added last. */
  each?: (index: number) => Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface Instance {
  /** 'A', 'B', … in start order. */
  name: string;
  dataDir: string;
  port: number;
  server: Started;
  /** One request on a fresh connection. */
  call(method: string, path: string, options?: { key?: string; body?: unknown }): Promise<Answer>;
  /** A multipart upload to `POST /v1/files` (form fields, then the file part named `file`). */
  upload(
    key: string,
    file: { name: string; type: string; data: string | Uint8Array },
    fields?: Record<string, string>,
  ): Promise<Answer>;
  /** SIGTERM: the instance drains, flushes and exits; answers how it exited. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: the instance dies at once, as with a machine that fails. */
  kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function call(port: number, method: string, path: string, options: { key?: string; body?: unknown } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.key) {
      headers.authorization = `Bearer ${options.key}`;
    }
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
    }
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => {
        body += piece;
      });
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

async function upload(
  port: number,
  key: string,
  file: { name: string; type: string; data: string | Uint8Array },
  fields: Record<string, string> = { purpose: 'assistants' },
): Promise<Answer> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    form.append(name, value);
  }
  const data = typeof file.data === 'string' ? file.data : new Uint8Array(file.data);
  form.append('file', new Blob([data], { type: file.type }), file.name);
  const response = await fetch(`http://127.0.0.1:${port}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const body = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body, json };
}

/** Starts the instances one after the other; resolves once all listen. */
export async function startInstances(setup: InstanceSetup = {}): Promise<Instance[]> {
  const instances: Instance[] = [];
  for (let index = 0; index < (setup.count ?? 2); index += 1) {
    const dir = setup.sharedDataDir ?? makeDataDir();
    const server = await startServer({ ...setup.shared, OMNIGATE_DATA_DIR: dir, ...setup.each?.(index) });
    const signal = (name: NodeJS.Signals) => {
      server.child.kill(name);
      return server.exited;
    };
    instances.push({
      name: String.fromCharCode(65 + index),
      dataDir: dir,
      port: server.port,
      server,
      call: (method, path, options) => call(server.port, method, path, options),
      upload: (key, file, fields) => upload(server.port, key, file, fields),
      stop: () => signal('SIGTERM'),
      kill: () => signal('SIGKILL'),
    });
  }
  return instances;
}
