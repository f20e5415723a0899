/**
 * The web console in a real headless Chromium against the real server process (`dist/main.js`, console built by
 * Vite): sign in, every playground page, usage, admin keys. The page may reach only the gateway on loopback
 * (every other host is refused and fails the test), and the key must appear in no URL and no log.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sseHead } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { dataDir, killServers, ROOT, startServer, type Started } from '../helpers/spawn-server.js';
import { chromiumPresent, launchChromium, requireChromium } from './chromium.js';
import { buildConsole, consoleStale } from '../../scripts/ensure-console.mjs';

const API_KEY = 'og-console-e2e-5f0c8a9d7e6b4a3c2d1e0f9a8b7c6d5e';
const ADMIN_KEY = 'og-console-admin-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d';
const SCREENSHOTS = path.join(ROOT, 'test-results', 'console');
/** A word no generated text contains: the uploaded file is found by it. */
const MARKER = 'quokkaphilous';
/**
 * expect.poll's own default gives up after 1 s: on a loaded machine a click's round trip and re-render can take
 * longer, and the page's default (90 s) is what every other wait here uses.
 */
const POLL = { timeout: 60_000 };
const AXE_SOURCE = readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

const chunk = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;

describe.skipIf(!chromiumPresent && !requireChromium)('the web console in Chromium', () => {
  let upstream: FakeUpstream;
  let releaseStream: () => void = () => undefined;
  let server: Started;
  let browser: Browser;
  let page: Page;
  let base: string;
  const urls: string[] = [];
  const refused: string[] = [];
  const consoleLines: string[] = [];
  let chatRequestId = '';

  /** Saves the page's screenshot (not committed) and fails on any serious or critical axe-core violation. */
  async function shot(name: string) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays on.
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: {
            run(
              context: Document,
              options: object,
            ): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
          };
        }
      ).axe;
      const result = await axe.run(document, { resultTypes: ['violations'] });
      return result.violations
        .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
    });
    expect(violations, name).toEqual([]);
  }

  async function go(name: string) {
    await page.getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  }

  beforeAll(async () => {
    if (!chromiumPresent) {
      throw new Error('Chromium is missing (apt-get install -y chromium) and CI=true requires the browser tests');
    }
    if (consoleStale()) {
      buildConsole();
    }
    // An OpenAI-compatible upstream whose `held` model streams "he", then waits for the test (or the client's
    // disconnect) before "llo": the text is seen to grow, and the stop button is seen to end a live stream.
    upstream = await startFakeUpstream(async (request, res) => {
      const model = (request.body as { model?: string }).model;
      sseHead(res);
      res.write(
        chunk({
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model,
          choices: [{ index: 0, delta: { role: 'assistant', content: 'he' }, finish_reason: null }],
        }),
      );
      if (model === 'endless') {
        return; // until the client goes
      }
      await new Promise<void>((resolve) => {
        releaseStream = resolve;
      });
      res.write(
        chunk({
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model,
          choices: [{ index: 0, delta: { content: 'llo' }, finish_reason: 'stop' }],
        }),
      );
      res.write(
        chunk({
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model,
          choices: [],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        }),
      );
      res.end('data: [DONE]\n\n');
    });
    const dir = dataDir();
    const config = path.join(dir, 'omnigate.yaml');
    writeFileSync(
      config,
      `providers:\n  up:\n    type: openai-compatible\n    base_url: ${upstream.origin}/v1\nmodels:\n  - { provider: up, model: held }\n  - { provider: up, model: endless }\n  - id: pair\n    deployments:\n      - { provider: up, model: held }\n      - { provider: up, model: endless }\n`,
    );
    server = await startServer({
      OMNIGATE_DATA_DIR: dir,
      OMNIGATE_API_KEYS: API_KEY,
      OMNIGATE_ADMIN_KEY: ADMIN_KEY,
      OMNIGATE_CONFIG: config,
      OMNIGATE_MEDIA_WORKERS: '2',
    });
    base = `http://127.0.0.1:${server.port}`;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(90_000);
    page.on('request', (request) => urls.push(request.url()));
    page.on('console', (message) => consoleLines.push(message.text()));
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1' && url.port === String(server.port)) {
        return route.continue();
      }
      refused.push(url.href);
      return route.abort('blockedbyclient');
    });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    killServers();
    await upstream?.close();
  });

  it('signs in with an API key kept in session storage', async () => {
    await page.goto(`${base}/console`);
    await page.getByLabel('API key', { exact: true }).fill(API_KEY);
    await page.getByLabel('Admin key (optional)').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    await shot('sign-in');
    expect(await page.evaluate(() => sessionStorage.getItem('omnigate.apiKey'))).toBe(API_KEY);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
  });

  it('streams a chat answer token by token, with usage and request id; stop ends a live stream', async () => {
    await go('Chat');
    await page.getByLabel('Model').selectOption('up:held');
    await page.getByLabel('Message').fill('Say hello');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.getByTestId('answer').last();
    await expect.poll(() => answer.textContent(), { timeout: 60_000 }).toBe('he');
    expect(await page.getByTestId('usage').count()).toBe(0); // still streaming: no usage yet
    releaseStream();
    await expect.poll(() => answer.textContent(), { timeout: 60_000 }).toBe('hello');
    await expect.poll(() => page.getByTestId('usage').last().textContent(), POLL).toContain('5 in · 2 out');
    chatRequestId = (await page.getByTestId('request-id').last().textContent()) ?? '';
    expect(chatRequestId).toMatch(/^req_/);

    await page.getByLabel('Model').selectOption('up:endless');
    await page.getByLabel('Message').fill('Never stop');
    const closed = upstream.socketClosed();
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('answer').last().textContent(), { timeout: 60_000 }).toBe('he');
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByTestId('stopped').waitFor();
    await closed; // the stop reached the gateway, which closed the upstream stream
    await shot('chat');
  });

  it('speaks the Responses and Anthropic Messages dialects too', async () => {
    for (const dialect of ['Responses (/v1/responses)', 'Anthropic Messages (/anthropic/v1/messages)']) {
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByLabel('Model').selectOption('local:chat');
      await page.getByLabel('Dialect').selectOption({ label: dialect });
      await page.getByLabel('Message').fill('ping pong');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect
        .poll(() => page.getByTestId('answer').last().textContent(), { timeout: 60_000 })
        .toContain('ping pong');
      await expect.poll(() => page.getByTestId('usage').count(), { timeout: 60_000 }).toBe(1);
    }
  });

  it('generates an image that decodes, with a download link', async () => {
    await go('Images');
    await page.getByLabel('Size', { exact: true }).selectOption('256x256');
    await page.getByLabel('Prompt').fill('a red fox in the snow');
    await page.getByRole('button', { name: 'Generate' }).click();
    const image = page.locator('.gallery img').first();
    await image.waitFor();
    await expect.poll(() => image.evaluate((element: HTMLImageElement) => element.naturalWidth), POLL).toBe(256);
    expect(await page.getByRole('link', { name: 'Download image 1' }).getAttribute('download')).toBe('image-1.png');
    await shot('images');
  });

  it('synthesizes speech and composes music into playable audio', async () => {
    await go('Speech & music');
    await page.getByLabel('Text to speak').fill('Hello from the console.');
    await page.getByLabel('Speed').fill('1.5');
    await page.getByLabel('Format').selectOption('wav');
    await page.getByRole('button', { name: 'Speak' }).click();
    const speech = page.getByTestId('speech');
    await speech.waitFor();
    await expect
      .poll(() => speech.evaluate((element: HTMLAudioElement) => element.duration || 0), { timeout: 60_000 })
      .toBeGreaterThan(0);
    await page.getByLabel('Duration (seconds)').fill('3');
    await page.getByLabel('Music prompt').fill('calm piano');
    await page.getByRole('button', { name: 'Compose' }).click();
    const music = page.getByTestId('music');
    await music.waitFor();
    await expect
      .poll(() => music.evaluate((element: HTMLAudioElement) => element.duration || 0), { timeout: 60_000 })
      .toBeGreaterThan(2);
    await shot('audio');
  });

  it('creates a video, shows its progress, then plays it with a thumbnail', async () => {
    await go('Video');
    await page.evaluate(() => {
      // Every progress value the bar shows, in order, recorded as it changes.
      (window as unknown as { progress: number[] }).progress = [];
      new MutationObserver(() => {
        const bar = document.querySelector<HTMLProgressElement>('[data-testid="video-progress"]');
        const seen = (window as unknown as { progress: number[] }).progress;
        if (bar && seen[seen.length - 1] !== bar.value) {
          seen.push(bar.value);
        }
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await page.getByLabel('Seconds').selectOption('4');
    await page.getByLabel('Size', { exact: true }).selectOption('1280x720');
    await page.getByLabel('Prompt').fill('a paper boat on a river');
    await page.getByRole('button', { name: 'Create video' }).click();
    const player = page.getByTestId('video-player');
    await player.waitFor({ timeout: 180_000 });
    await expect
      .poll(() => player.evaluate((element: HTMLVideoElement) => element.duration || 0), { timeout: 60_000 })
      .toBeGreaterThan(3);
    await player.evaluate((element: HTMLVideoElement) => element.play());
    await expect
      .poll(() => player.evaluate((element: HTMLVideoElement) => element.currentTime), POLL)
      .toBeGreaterThan(0);
    const progress = await page.evaluate(() => (window as unknown as { progress: number[] }).progress);
    expect(progress[0]).toBeLessThan(100);
    expect(progress.at(-1)).toBe(100);
    const thumbnail = page.locator('img.thumbnail');
    await expect.poll(() => thumbnail.evaluate((element: HTMLImageElement) => element.naturalWidth), POLL).toBe(1280);
    await shot('video');
  });

  it('uploads a dropped file with progress, finds it by a search answer whose citation opens the passage, deletes it', async () => {
    await go('Files');
    const text = `Field notes. The ${MARKER} lizard basks on warm granite every afternoon near the river bend.\n`;
    await page.evaluate(() => {
      // Whether the upload's progress bar was shown, recorded as the page changes.
      new MutationObserver(() => {
        if (document.getElementById('upload-progress')) {
          (window as unknown as { uploadProgressShown: boolean }).uploadProgressShown = true;
        }
      }).observe(document.body, { subtree: true, childList: true });
    });
    await page.getByTestId('dropzone').evaluate((zone, content) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([content], 'field-notes.txt', { type: 'text/plain' }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, text);
    const row = page.getByTestId('file-list').getByRole('row').filter({ hasText: 'field-notes.txt' });
    await row.waitFor();
    expect(
      await page.evaluate(() => (window as unknown as { uploadProgressShown?: boolean }).uploadProgressShown),
    ).toBe(true);
    await shot('files');

    await go('Search');
    await page.getByLabel('Query').fill(`${MARKER} lizard`);
    // Indexing runs after the upload's answer: search until the file is cited.
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Search', exact: true }).click();
          await page.getByRole('button', { name: 'Search', exact: true }).waitFor();
          await page.waitForFunction(() => !document.querySelector('button[type=submit][disabled]'));
          return page.getByTestId('sources').getByRole('listitem').count();
        },
        { timeout: 90_000, interval: 500 },
      )
      .toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Open source 1' }).first().click();
    await expect.poll(() => page.getByTestId('passage-text').textContent(), POLL).toContain(MARKER);
    await page.getByRole('button', { name: 'Load the file' }).click();
    expect(await page.getByRole('link', { name: 'Open the file' }).getAttribute('href')).toMatch(/^blob:/);
    await shot('search');
    await page.getByRole('button', { name: 'Close' }).click();

    await go('Files');
    await row.getByRole('button', { name: 'Delete field-notes.txt' }).click();
    await expect.poll(() => row.count(), POLL).toBe(0);
  });

  it('calls an MCP tool from the form made from its input schema and renders the image it returns', async () => {
    await go('MCP tools');
    await page.getByLabel('Tool', { exact: true }).selectOption('generate_image');
    const form = page.getByTestId('tool-form');
    await form.getByLabel('prompt (required)').fill('a lighthouse at night');
    await form.getByRole('button', { name: 'Call generate_image' }).click();
    const image = page.getByTestId('tool-image').first();
    await image.waitFor({ timeout: 90_000 });
    await expect
      .poll(() => image.evaluate((element: HTMLImageElement) => element.naturalWidth), POLL)
      .toBeGreaterThan(0);
    await shot('mcp');
  });

  it('charts the calls just made and finds one by its request id', async () => {
    await go('Usage');
    await page.getByTestId('chart-requests').locator('canvas').waitFor();
    const latest = page.getByTestId('latest-calls');
    await latest.waitFor();
    expect(await latest.locator('tbody code').count()).toBeGreaterThan(5);
    const models = await page
      .getByRole('figure', { name: 'Requests per model' })
      .locator('.bar-label')
      .allTextContents();
    expect(models).toEqual(
      expect.arrayContaining(['up:held', 'local:chat', 'local:image', 'local:speech', 'local:video']),
    );
    await page.getByLabel('Find a call by request id').fill(chatRequestId);
    await page.getByRole('button', { name: 'Find' }).click();
    const found = page.getByTestId('found-calls').locator('tbody tr');
    await expect.poll(() => found.count(), POLL).toBe(1);
    expect(await found.textContent()).toContain('createChatCompletion');
    await shot('usage');
  });

  it('manages keys with the admin key: creates one, sets its limits, revokes it', async () => {
    const probe = await fetch(`${base}/admin/v1/keys`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(probe.status).toBe(200);
    await go('Keys (admin)');
    await page.getByLabel('Name').fill('console-e2e');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('new-secret').textContent();
    expect(secret?.length).toBeGreaterThan(20);
    const row = page.getByTestId('key-list').getByRole('row').filter({ hasText: 'console-e2e' });
    page.once('dialog', (dialog) => dialog.accept('{"rpm": 60}'));
    await row.getByRole('button', { name: 'Set limits of console-e2e' }).click();
    await expect.poll(() => row.textContent(), POLL).toContain('rpm 60');
    page.once('dialog', (dialog) => dialog.accept());
    await row.getByRole('button', { name: 'Revoke console-e2e' }).click();
    await expect.poll(() => row.textContent(), POLL).toContain('revoked');
    await shot('keys');
  });

  it('shows each deployment of a model with deployments and its circuit', async () => {
    await go('Deployments (admin)');
    const circuits = page.getByTestId('circuits');
    await expect.poll(() => circuits.textContent(), POLL).toContain('up:endless');
    const rows = await circuits.getByRole('row').allTextContents();
    expect(rows.filter((row) => row.includes('pair')).sort()).toEqual(['pairup:endlessclosed0', 'pairup:heldclosed0']);
    await shot('deployments');
  });

  it('fits a phone-width screen, the navigation behind a menu button', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Menu' }).click();
    await go('Chat');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot('phone-chat');
  });

  it('reached no host but the gateway, and put no key in any URL or log', () => {
    expect(refused).toEqual([]);
    expect(urls.length).toBeGreaterThan(10);
    for (const url of urls) {
      expect(url).not.toContain(API_KEY);
      expect(url).not.toContain(ADMIN_KEY);
    }
    for (const text of [...consoleLines, server.stdout(), server.stderr()]) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(ADMIN_KEY);
    }
    expect(readFileSync(path.join(ROOT, 'console', 'dist', 'index.html'), 'utf8')).not.toMatch(
      /<script(?![^>]*\bsrc=)/,
    );
  });
});
