import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppServer } from './app-server.js';

const servers: Array<{ close(): void }> = [];
afterEach(() => {
  servers.splice(0).forEach((server) => server.close());
});

describe('createAppServer', () => {
  it('builds requests and responses with the app prototypes, so Express has nothing to change, and Express works on them', async () => {
    const app = express();
    app.get('/echo', (req, res) => {
      res.status(201).json({ header: req.get('x-probe'), path: req.path, sameApp: req.app === app && res.app === app });
    });
    const server = createAppServer(app);
    servers.push(server);
    const born: boolean[] = [];
    server.prependListener('request', (req, res) => {
      born.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    const response = await fetch(`http://127.0.0.1:${port}/echo?x=1`, { headers: { 'x-probe': 'yes' } });

    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ header: 'yes', path: '/echo', sameApp: true });
    expect(born).toEqual([true]);
  });

  it('lets every request share one hidden class where a plain server gives each its own (V8 natives, in a child process)', async () => {
    // Two requests are held at the same point of the same handler, then their V8 maps are compared.
    const moduleUrl = new URL('./app-server.ts', import.meta.url).href;
    const script = `
      import { createServer } from 'node:http';
      import express from 'express';
      import { createAppServer } from ${JSON.stringify(moduleUrl)};
      const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
      async function compare(makeServer) {
        const app = express();
        const held = [];
        let result;
        app.use((req, res, next) => { req.seen = true; next(); });
        app.get('/', (req, res) => {
          held.push([req, res]);
          if (held.length < 2) return;
          result = sameMap(held[0][0], held[1][0]) && sameMap(held[0][1], held[1][1]);
          for (const [, r] of held) r.end('ok');
        });
        const server = makeServer(app);
        await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
        const url = 'http://127.0.0.1:' + server.address().port + '/';
        for (let round = 0; round < 3; round++) {
          held.length = 0;
          await Promise.all([fetch(url).then((r) => r.text()), fetch(url).then((r) => r.text())]);
        }
        server.close();
        return result;
      }
      const plain = await compare((app) => createServer(app));
      const ours = await compare((app) => createAppServer(app));
      console.log(JSON.stringify({ plain, ours }));
    `;
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '--eval', script],
      // A guard against a hung child, not a speed limit: starting tsx on a busy machine can take tens of seconds.
      { cwd: root, timeout: 100_000 },
    );

    expect(JSON.parse(stdout.trim().split('\n').pop() ?? '')).toEqual({ plain: false, ours: true });
  }, 120_000);
});
