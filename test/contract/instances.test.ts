/**
 * Two Omnigate instances as separate processes (test/helpers/instances.ts) over one SQLite file and one
 * pepper: what a deployment of several instances must do, on the embedded backend. A key made next to them
 * works on both at once, a revoked key is refused by both shortly after, the usage records of both are listed
 * by either, and one instance killed with SIGKILL leaves the other serving with its data intact; a video whose
 * instance is killed mid-render is taken over by the other when its lease lapses, and downloads from both.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/child-processes.js';
import { startInstances } from '../helpers/instances.js';
import { expectSameVideoFrom, killRendererMidVideo } from '../helpers/video-takeover.js';
import { dataDir, environment, killServers, ROOT } from '../helpers/spawn-server.js';

const TEST_TIMEOUT_MS = 240_000;
const CHAT = { model: 'local:chat', messages: [{ role: 'user', content: 'hello from two instances' }] };

afterEach(() => {
  killServers();
});

function keysCli(dir: string, ...argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['bin/omnigate.mjs', 'keys', ...argv],
      { cwd: ROOT, env: environment({ OMNIGATE_DATA_DIR: dir }) },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

describe('two instances on one SQLite file', () => {
  it(
    'share keys, revocations and usage records, and one survives the other being killed',
    async () => {
      const dir = dataDir();
      const [a, b] = await startInstances({ sharedDataDir: dir });
      const created = await keysCli(dir, 'create', '--name', 'shared');
      const key = /og-[A-Za-z0-9_-]{32}/.exec(created)![0];
      const keyId = /key_[0-9a-f]+/.exec(created)![0];

      // At once: the first call on each instance already succeeds.
      const onA = await a.call('POST', '/v1/chat/completions', { key, body: CHAT });
      const onB = await b.call('POST', '/v1/chat/completions', { key, body: CHAT });
      expect([onA.status, onB.status]).toEqual([200, 200]);

      // Each instance's usage records are listed by the other (the recorders write in batches: polled).
      const requestIds = [onA, onB].map((answer) => answer.headers['x-svc-request-id'] as string);
      for (const [reader, requestId] of [
        [b, requestIds[0]],
        [a, requestIds[1]],
      ] as const) {
        expect(
          await eventually(async () => {
            const listed = await reader.call('GET', `/v1/usage?request_id=${requestId}`, { key });
            return (listed.json as { data: unknown[] }).data.length === 1;
          }),
        ).toBe(true);
      }

      // Revoked next to them: both refuse it. The key cache rechecks the database every 50 ms; the guard is
      // 1 s (the deployment's promise) plus three times a call's own time here, measured now, for a busy machine.
      const before = performance.now();
      await b.call('GET', '/v1/models', { key });
      const callMs = performance.now() - before;
      await keysCli(dir, 'revoke', keyId);
      for (const instance of [a, b]) {
        expect(
          await eventually(
            async () => (await instance.call('GET', '/v1/models', { key })).status === 401,
            1_000 + 3 * callMs,
          ),
          `instance ${instance.name} still accepts the revoked key`,
        ).toBe(true);
      }

      // A dies without a chance to flush or close; B keeps serving on the same file.
      const second = /og-[A-Za-z0-9_-]{32}/.exec(await keysCli(dir, 'create', '--name', 'after'))![0];
      expect(await a.kill()).toEqual({ code: null, signal: 'SIGKILL' });
      const after = await b.call('POST', '/v1/chat/completions', { key: second, body: CHAT });
      expect(after.status).toBe(200);
      expect(await b.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT_MS,
  );
});

/** The pid in the `claimed_by` of a video task (`runner_<random>_<pid>`), read from the shared file. */
function claimantPid(dir: string, id: string): number | undefined {
  const db = new Database(path.join(dir, 'omnigate.sqlite'), { readonly: true });
  try {
    const row = db.prepare('SELECT claimed_by FROM video_tasks WHERE id = ?').get(id) as { claimed_by: string | null };
    const pid = /_(\d+)$/.exec(row?.claimed_by ?? '')?.[1];
    return pid ? Number(pid) : undefined;
  } finally {
    db.close();
  }
}

describe('a video across two instances on one SQLite file', () => {
  it(
    'is completed by the other instance when the one rendering it is killed, and downloads from both',
    async () => {
      const dir = dataDir();
      const key = 'og-instances-video-Hq7Zp2Lx9Vr4Nc8Tb1Md6Kw3';
      const shared = { OMNIGATE_API_KEYS: key, OMNIGATE_VIDEO_LEASE_MS: '2000' };
      const instances = await startInstances({ sharedDataDir: dir, shared });
      const { id, survivor } = await killRendererMidVideo(instances, key, (id) => claimantPid(dir, id), 240_000);
      // The dead instance's place is taken by a new process on the same file: both serve the same bytes.
      const [restarted] = await startInstances({ count: 1, sharedDataDir: dir, shared });
      await expectSameVideoFrom([survivor, restarted], id, key);
    },
    TEST_TIMEOUT_MS * 2,
  );
});
