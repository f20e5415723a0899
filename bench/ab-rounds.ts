/**
 * The A/B loop of bench/limits.ts, bench/resilience.ts and bench/observability.ts: gateways started side by side,
 * each driven in turn with autocannon at a fixed `overallRate` (64 connections, non-streamed chat), in
 * interleaved rounds whose order turns each round (so drift on a shared machine hits all alike and no
 * configuration always follows the same one), reading the gateway's CPU (utime + stime from /proc) per request.
 * Round 0 (2 s) warms every gateway up and is not recorded. The first system is the baseline of the table and
 * the per-round ratios; a second, identical one beside it is the control (what two equal systems read apart).
 *
 * Settings from the environment: BENCH_ROUNDS (5), BENCH_DURATION_S (8), BENCH_RATE (1000).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { type ChildServer, KEY, LOAD_CORE, median, PIN } from './children.js';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
export const RATE = Number(process.env.BENCH_RATE ?? 1000);

export interface AbSystem {
  name: string;
  gateway: ChildServer;
}

/** Prints `usage` (the script's head comment, as text) and exits when `--help` is among the arguments. */
export function helpRequested(usage: string): void {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${usage.trim()}\n`);
    process.exit(0);
  }
}

/** Moves this process (the load generator) to the load core, beside the fake upstream. */
export function pinLoadGenerator(): void {
  if (PIN) {
    spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)]);
  }
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Drives every system in every round; answers each system's CPU µs/request per recorded round. */
export async function runRounds(
  systems: AbSystem[],
  body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] }),
): Promise<{ results: Map<string, number[]>; loads: number[] }> {
  const results = new Map<string, number[]>(systems.map((system) => [system.name, []]));
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS + 1; round++) {
    const order = systems.map((_, index) => systems[(index + round) % systems.length]);
    for (const { name, gateway } of order) {
      const before = cpuTicks(gateway.pid);
      const result = await autocannon({
        url: `http://127.0.0.1:${gateway.port}/v1/chat/completions`,
        method: 'POST',
        connections: 64,
        overallRate: RATE,
        duration: round === 0 ? 2 : DURATION_S,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body,
      });
      const micros = (((cpuTicks(gateway.pid) - before) / 100) * 1e6) / result.requests.total;
      if (result.non2xx + result.errors > 0) {
        throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      }
      if (round > 0) {
        results.get(name)!.push(micros);
        loads.push(loadavg()[0]);
        process.stdout.write(
          `round ${round} ${name}: ${micros.toFixed(0)} µs/req, ${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms, load ${loadavg()[0].toFixed(1)}\n`,
        );
      }
    }
  }
  return { results, loads };
}

/**
 * The table (median, min–max, vs the first system), the per-round ratios to it and the load average seen;
 * `vs` names the baseline in the headings (`off`, `single`), `note` ends the last line.
 */
export function printTable(
  systems: AbSystem[],
  { results, loads }: { results: Map<string, number[]>; loads: number[] },
  vs: string,
  note = '',
): void {
  const baseline = systems[0].name;
  const base = median(results.get(baseline)!);
  process.stdout.write(
    `\n| configuration | CPU µs/req @${RATE} req/s, median (min–max) of ${ROUNDS} | vs ${vs} |\n|---|---|---|\n`,
  );
  for (const [name, values] of results) {
    const value = median(values);
    process.stdout.write(
      `| ${name} | ${value.toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}) | ${name === baseline ? '—' : `${(((value - base) / base) * 100).toFixed(1)} %`} |\n`,
    );
  }
  process.stdout.write(
    `\nper-round ratios to ${baseline}: ${systems
      .slice(1)
      .map(
        (system) =>
          `${system.name}: ${results
            .get(system.name)!
            .map((value, index) => (value / results.get(baseline)![index]).toFixed(3))
            .join(', ')}`,
      )
      .join('; ')}\n`,
  );
  process.stdout.write(
    `load average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${PIN ? 'pinned' : 'unpinned'} cores${note}\n`,
  );
}

/** Runs `main`, printing a failure's stack and exiting 1. */
export function run(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
