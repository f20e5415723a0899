/**
 * A large upload to the real process (`server/main.ts`): a 400 MiB file, generated as it is sent, is streamed
 * to disk while the server's resident memory is sampled from /proc; it must stay far below the file's size.
 * The stored bytes' sha256 must be the one computed on the way out, and the upload's throughput is logged.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { benchFiles } from '../../bench/files.js';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';

const TEST_TIMEOUT_MS = 300_000;
const MIB = 1024 * 1024;
const FILE_BYTES = 400 * MIB;
/** Growth of the server's RSS allowed during the upload: a tenth of the file. */
const RSS_GROWTH_LIMIT = 40 * MIB;

afterEach(() => killServers());

function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

describe.skipIf(process.platform !== 'linux')('a large upload to the real process', () => {
  it(
    `streams ${FILE_BYTES / MIB} MiB to disk with the server's RSS bounded`,
    async () => {
      const key = 'sk-files-process-test-key-0123456789abcdef';
      const server = await startServer({
        OMNIGATE_API_KEYS: key,
        OMNIGATE_DATA_DIR: dataDir(),
        OMNIGATE_REQUEST_TIMEOUT_MS: '600000',
      });
      const pid = server.child.pid!;
      // Warm the route (the validator compiles its schemas on first use) before the baseline is taken.
      await benchFiles(`http://127.0.0.1:${server.port}`, key, MIB);
      const baseline = rssOf(pid);
      let peak = baseline;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssOf(pid));
      }, 50);
      try {
        const result = await benchFiles(`http://127.0.0.1:${server.port}`, key, FILE_BYTES);
        expect(result.sha256Matches).toBe(true);
        process.stdout.write(
          `files: ${FILE_BYTES / MIB} MiB in ${result.seconds.toFixed(2)} s = ${result.megabytesPerSecond.toFixed(0)} MiB/s; server RSS ${(baseline / MIB).toFixed(0)} → peak ${(peak / MIB).toFixed(0)} MiB\n`,
        );
      } finally {
        clearInterval(sampler);
      }
      expect(peak - baseline).toBeLessThan(RSS_GROWTH_LIMIT);
    },
    TEST_TIMEOUT_MS,
  );
});
