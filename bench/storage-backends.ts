/**
 * What the scale-out backends cost on the chat path: the gateway's CPU µs per request at a fixed rate, its
 * p99 there, and its max req/s (autocannon unthrottled), on SQLite (the default) and with
 * `OMNIGATE_DATABASE_URL` (a fresh PostgreSQL database of its own, dropped at the end) and `OMNIGATE_REDIS_URL`
 * set. Same method as bench/limits.ts: gateways side by side, driven one at a time in interleaved rounds whose
 * order turns, a second SQLite gateway as the control (what two identical systems read apart on this machine).
 *
 *   node scripts/ensure-build.mjs && npx tsx bench/storage-backends.ts
 *   # BENCH_ROUNDS, BENCH_DURATION_S, BENCH_RATE, BENCH_REDIS_URL, BENCH_POSTGRES_URL (an admin URL)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort, KEY, LOAD_CORE, median, PIN, startChild, startGateway } from './children.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 6);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  if (PIN) {
    spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)]);
  }
  const name = `omnigate_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/${name}`;
  const upstreamPort = await freePort();
  const upstream = await startChild('bench/fake-upstream-server.ts', upstreamPort, {}, LOAD_CORE);
  const quiet = { LOG_LEVEL: 'warn' };
  const systems = [
    { name: 'SQLite', gateway: await startGateway(upstreamPort, quiet) },
    { name: 'SQLite (control)', gateway: await startGateway(upstreamPort, quiet) },
    {
      name: 'PostgreSQL + Redis',
      gateway: await startGateway(upstreamPort, {
        ...quiet,
        OMNIGATE_DATABASE_URL: databaseUrl.toString(),
        OMNIGATE_REDIS_URL: REDIS_URL,
      }),
    },
  ];
  const cpu = new Map<string, number[]>(systems.map((system) => [system.name, []]));
  const p99 = new Map<string, number[]>(systems.map((system) => [system.name, []]));
  const max = new Map<string, number[]>(systems.map((system) => [system.name, []]));
  const loads: number[] = [];
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] });
  const drive = (port: number, seconds: number, rate?: number) =>
    autocannon({
      url: `http://127.0.0.1:${port}/v1/chat/completions`,
      method: 'POST',
      connections: 64,
      overallRate: rate,
      duration: seconds,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body,
    });
  try {
    for (let round = 0; round < ROUNDS + 1; round++) {
      const order = systems.map((_, index) => systems[(index + round) % systems.length]);
      for (const { name: system, gateway } of order) {
        const before = cpuTicks(gateway.pid);
        const fixed = await drive(gateway.port, round === 0 ? 2 : DURATION_S, RATE); // round 0 warms up
        const micros = (((cpuTicks(gateway.pid) - before) / 100) * 1e6) / fixed.requests.total;
        if (fixed.non2xx + fixed.errors > 0) {
          throw new Error(`${system}: ${fixed.non2xx} non-2xx, ${fixed.errors} errors`);
        }
        if (round === 0) {
          continue;
        }
        const open = await drive(gateway.port, DURATION_S);
        cpu.get(system)!.push(micros);
        p99.get(system)!.push(fixed.latency.p99);
        max.get(system)!.push(open.requests.average);
        loads.push(loadavg()[0]);
        process.stdout.write(
          `round ${round} ${system}: ${micros.toFixed(0)} µs/req at ${fixed.requests.average.toFixed(0)} req/s (p99 ${fixed.latency.p99} ms); max ${open.requests.average.toFixed(0)} req/s; load ${loadavg()[0].toFixed(1)}\n`,
        );
      }
    }
    const base = (values: Map<string, number[]>) => median(values.get('SQLite')!);
    const versus = (value: number, of: number) => `${(((value - of) / of) * 100).toFixed(1)} %`;
    process.stdout.write(
      `\n| configuration | CPU µs/req @${RATE} req/s | vs SQLite | p99 ms | max req/s | vs SQLite |\n|---|---|---|---|---|---|\n`,
    );
    for (const { name: system } of systems) {
      const [c, p, m] = [median(cpu.get(system)!), median(p99.get(system)!), median(max.get(system)!)];
      process.stdout.write(
        `| ${system} | ${c.toFixed(0)} (${Math.min(...cpu.get(system)!).toFixed(0)}–${Math.max(...cpu.get(system)!).toFixed(0)}) | ${system === 'SQLite' ? '—' : versus(c, base(cpu))} | ${p} | ${m.toFixed(0)} | ${system === 'SQLite' ? '—' : versus(m, base(max))} |\n`,
      );
    }
    process.stdout.write(
      `load average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${PIN ? 'pinned' : 'unpinned'} cores\n`,
    );
  } finally {
    await Promise.all([...systems.map((system) => system.gateway.stop()), upstream.stop()]);
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
