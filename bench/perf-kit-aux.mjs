// Helpers for bench/perf-kit-start.sh, the start command of the perf-kit budget candidates
// (bench/perf-kit-budgets.ts). Plain Node, no loader: each runs as its own short process.
//
//   node bench/perf-kit-aux.mjs create-db ADMIN_URL NAME         creates database NAME, prints its URL
//   node bench/perf-kit-aux.mjs drop-db-after PID ADMIN_URL NAME  waits until PID is gone, then drops NAME
//   node bench/perf-kit-aux.mjs otlp-sink PID PORT_FILE           OTLP/HTTP collector on 127.0.0.1 until PID is gone
//
// The last two are started detached from the gateway's process tree (perf-kit-start.sh) and on the driver's
// CPU, so the kit's CPU figure (utime + stime of the gateway's tree) counts neither: the collector's work is not
// the gateway's, as in bench/observability.ts where the collector lives in the bench process.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import pg from 'pg';

const [command, ...args] = process.argv.slice(2);
const NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const POLL_MS = 500;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function whenGone(pid) {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!alive(pid)) {
        clearInterval(timer);
        resolve();
      }
    }, POLL_MS);
  });
}

async function admin(adminUrl, sql) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function databaseName(name) {
  if (!NAME.test(name)) throw new Error(`not a database name: ${name}`);
  return name;
}

async function main() {
  if (command === 'create-db') {
    const [adminUrl, name] = args;
    await admin(adminUrl, `CREATE DATABASE ${databaseName(name)}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    process.stdout.write(`${url}\n`);
    return;
  }
  if (command === 'drop-db-after') {
    const [pid, adminUrl, name] = args;
    await whenGone(Number(pid));
    // WITH (FORCE): a pooled connection of the gateway killed by SIGKILL may linger a moment.
    await admin(adminUrl, `DROP DATABASE IF EXISTS ${databaseName(name)} WITH (FORCE)`);
    console.log(`dropped database ${name}`);
    return;
  }
  if (command === 'otlp-sink') {
    const [pid, portFile] = args;
    let exports = 0;
    let spans = 0;
    let bad = 0;
    let protobufBytes = 0;
    const server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        if (String(req.headers['content-type']).startsWith('application/x-protobuf')) {
          // The gateway's default encoding: counted by export and size (decoding spans would need the proto schema);
          // an empty body is an empty ExportTraceServiceResponse.
          exports += 1;
          protobufBytes += Buffer.concat(chunks).length;
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
          return;
        }
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          for (const resource of body.resourceSpans ?? []) {
            for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
          }
          exports += 1;
        } catch {
          bad += 1;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    writeFileSync(portFile, String(server.address().port));
    console.log(`otlp sink on 127.0.0.1:${server.address().port} for pid ${pid}`);
    await whenGone(Number(pid));
    console.log(
      `otlp sink: ${exports} exports, ${spans} spans in JSON, ${protobufBytes} bytes of protobuf, ${bad} unreadable`,
    );
    server.close();
    server.closeAllConnections();
    return;
  }
  throw new Error(`unknown command: ${command ?? '(none)'}; see the head of bench/perf-kit-aux.mjs`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
