/**
 * The MCP endpoint driven by the official clients over real HTTP: the v2 `@modelcontextprotocol/client` in
 * `legacy` (initialize, 2025-11-25) and `auto` (server/discover, 2026-07-28) negotiation, and the v1
 * `@modelcontextprotocol/sdk` client. Every tool is called offline (built-in engines), its structuredContent
 * is checked with Ajv against the output schema the server itself lists, and the media it made is decoded.
 */
import { Client as ClientV2, SdkHttpError } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp } from '../helpers/create-test-app.js';
import { minimalPdf } from '../helpers/minimal-pdf.js';
import { startServer, type StartedServer } from './start-server.js';

const TOOL_NAMES = [
  'image_understanding',
  'generate_image',
  'text_to_speech',
  'transcribe_audio',
  'generate_music',
  'create_video',
  'get_video',
  'chat',
  'web_search',
  'search_answer',
  'list_files',
  'read_file',
  'embed',
];

const KEEPING = '# Lighthouse keeping\n\nThe keeper lights the lamp at dusk and trims the wick at midnight.\n';
const PDF_LINES = [
  'The lighthouse lens was ground in Paris in 1871.',
  'Its beam reaches twenty nautical miles on a clear night.',
];
const HTML =
  '<html><head><title>Log</title><script>var hidden = 1;</script></head><body><h1>Daybook</h1><p>Three ships passed the <b>reef</b> at noon.</p></body></html>';
/** Ids of the files uploaded over HTTP before the clients connect. */
const uploaded: Record<'md' | 'pdf' | 'html' | 'png' | 'othersMd', string> = {
  md: '',
  pdf: '',
  html: '',
  png: '',
  othersMd: '',
};

type ToolResult = {
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string; uri?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};
interface AnyClient {
  listTools(): Promise<{
    tools: Array<{ name: string; outputSchema?: Record<string, unknown>; inputSchema: Record<string, unknown> }>;
  }>;
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    options?: { onprogress?: (progress: { progress: number; total?: number }) => void; timeout?: number },
  ): Promise<unknown>;
  close(): Promise<void>;
}

let started: StartedServer;
let pngDataUrl: string;
let limitedKey: string;

beforeAll(async () => {
  started = await startServer({
    // A public-looking name that resolves to loopback: the SSRF guard must refuse it.
    tools: {
      resolveHost: async (hostname) =>
        hostname === 'images.example.test' ? [{ address: '127.0.0.1', family: 4 }] : [],
    },
  });
  // 64×48, left half opaque red, right half half-transparent blue.
  const pixels = Buffer.alloc(64 * 48 * 4);
  for (let y = 0; y < 48; y += 1) {
    for (let x = 0; x < 64; x += 1) {
      const at = (y * 64 + x) * 4;
      pixels.set(x < 32 ? [220, 20, 20, 255] : [20, 40, 220, 128], at);
    }
  }
  const png = await sharp(pixels, { raw: { width: 64, height: 48, channels: 4 } })
    .png()
    .toBuffer();
  pngDataUrl = `data:image/png;base64,${png.toString('base64')}`;
  limitedKey = (await started.testApp.keys.create({ name: 'chat only', allowedModels: ['local:chat'] })).key;
  const otherKey = (await started.testApp.keys.create({ name: 'other' })).key;
  const send = async (key: string, name: string, bytes: Uint8Array): Promise<string> => {
    const res = await request(started.testApp.app)
      .post('/v1/files')
      .set('authorization', `Bearer ${key}`)
      .field('purpose', 'user_data')
      .attach('file', Buffer.from(bytes), name);
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  uploaded.md = await send(started.key, 'keeping.md', Buffer.from(KEEPING));
  uploaded.pdf = await send(started.key, 'lens-history.pdf', minimalPdf(PDF_LINES));
  uploaded.html = await send(started.key, 'daybook.html', Buffer.from(HTML));
  uploaded.png = await send(started.key, 'picture.png', png);
  uploaded.othersMd = await send(
    otherKey,
    'secret.md',
    Buffer.from('# Secret\n\nThe lighthouse keeper hides the spare key under the mat.\n'),
  );
  // Uploads answer before their text is indexed.
  await started.testApp.searchIndex.idle();
});

afterAll(async () => {
  await started?.close();
});

const url = () => new URL(`${started.baseURL}/v1/mcp`);
const auth = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });

async function connectV2(
  mode: 'legacy' | 'auto',
  key = started.key,
): Promise<{ client: AnyClient; version: () => string | undefined }> {
  const client = new ClientV2({ name: 'omnigate-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new TransportV2(url(), { requestInit: auth(key) }));
  return { client: client as unknown as AnyClient, version: () => client.getNegotiatedProtocolVersion() };
}

async function connectV1(key = started.key): Promise<{ client: AnyClient; version: () => string | undefined }> {
  const client = new ClientV1({ name: 'omnigate-test-v1', version: '1.0.0' });
  const transport = new TransportV1(url(), { requestInit: auth(key) });
  await client.connect(transport);
  return { client: client as unknown as AnyClient, version: () => transport.protocolVersion };
}

function checkAgainst(schema: Record<string, unknown> | undefined, value: unknown): void {
  expect(schema).toBeDefined();
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  const validate = ajv.compile(schema!);
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
}

describe.each([
  ['v2 client, legacy negotiation', () => connectV2('legacy'), '2025-11-25'],
  ['v2 client, auto negotiation', () => connectV2('auto'), '2026-07-28'],
  ['v1 client', () => connectV1(), '2025-11-25'],
] as const)('%s', (_name, connect, expectedVersion) => {
  let client: AnyClient;
  let schemas: Map<string, Record<string, unknown> | undefined>;

  beforeAll(async () => {
    const connected = await connect();
    client = connected.client;
    expect(connected.version()).toBe(expectedVersion);
    const { tools } = await client.listTools();
    schemas = new Map(tools.map((tool) => [tool.name, tool.outputSchema]));
  });
  afterAll(async () => {
    await client?.close();
  });

  const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    if (!result.isError) {
      checkAgainst(schemas.get(name), result.structuredContent);
    }
    return result;
  };

  it('lists exactly the served tools, each with an output schema', () => {
    expect([...schemas.keys()]).toEqual(TOOL_NAMES);
    expect([...schemas.values()].every((schema) => schema !== undefined)).toBe(true);
  });

  it('image_understanding measures a data-URL image with the built-in analysis', async () => {
    const result = await call('image_understanding', { prompt: 'What is in it?', image_url: pngDataUrl });
    expect(result.isError).toBeFalsy();
    const analysis = result.structuredContent?.analysis as Record<string, unknown>;
    expect(analysis).toMatchObject({
      format: 'png',
      media_type: 'image/png',
      width: 64,
      height: 48,
      is_opaque: false,
      has_alpha: true,
    });
    expect((analysis.palette as Array<{ name: string }>).map((colour) => colour.name)).toEqual(
      expect.arrayContaining(['red']),
    );
    expect(result.content[0].text).toMatch(/64×48 PNG.*with transparent areas/);
  });

  it('image_understanding refuses a URL whose name resolves to loopback (SSRF guard), as an isError result', async () => {
    const result = await call('image_understanding', { prompt: 'x', image_url: 'http://images.example.test/a.png' });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/images\.example\.test resolves to a non-public address/);
  });

  it('chat asks the built-in model through the chat core', async () => {
    const result = await call('chat', { prompt: 'Say hello' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ model: 'local:chat', finish_reason: 'stop' });
    expect(String(result.structuredContent?.content).length).toBeGreaterThan(0);
  });

  it("web_search finds the caller's own uploaded file with local:search, never another key's", async () => {
    const result = await call('web_search', { query: 'keeper wick', max_results: 5 });
    expect(result.isError).toBeFalsy();
    const results = result.structuredContent?.results as Array<{ title: string; url: string; source: string }>;
    expect(results.map((item) => item.title)).toEqual(['keeping.md']);
    expect(new URL(results[0].url).pathname).toBe(`/v1/files/${uploaded.md}/content`);
    expect(result.content[0].text).toMatch(
      /^1\. keeping\.md \(\d{4}-\d{2}-\d{2}\)\n {3}http:\/\/127\.0\.0\.1:\d+\/v1\/files\//,
    );
    const secret = await call('web_search', { query: 'spare key mat' });
    expect(secret.structuredContent?.results).toEqual([]);
    expect(secret.content[0].text).toBe('No results.');
  });

  it('search_answer answers from the uploaded files with citations its markers resolve to', async () => {
    const result = await call('search_answer', { query: 'Where was the lighthouse lens ground?' });
    expect(result.isError).toBeFalsy();
    const output = result.structuredContent as {
      model: string;
      answer: string;
      citations: Array<{ index: number; title: string; url: string }>;
    };
    expect(output.model).toBe('local:chat');
    expect(output.answer).toMatch(/Paris/);
    const used = new Set([...output.answer.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])));
    expect(used.size).toBeGreaterThan(0);
    expect(new Set(output.citations.map((citation) => citation.index))).toEqual(used);
    expect(output.citations.map((citation) => citation.title)).toContain('lens-history.pdf');
    expect(result.content[0].text).toContain('Sources:\n[1] ');
  });

  it("list_files lists the caller's own files, newest first, and pages with after", async () => {
    const result = await call('list_files', {});
    expect(result.isError).toBeFalsy();
    const files = result.structuredContent?.files as Array<{
      id: string;
      filename: string;
      content_type: string;
      bytes: number;
      purpose: string;
      created_at: number;
    }>;
    expect(files.map((file) => file.id)).toEqual([uploaded.png, uploaded.html, uploaded.pdf, uploaded.md]);
    expect(files[3]).toMatchObject({ filename: 'keeping.md', bytes: Buffer.byteLength(KEEPING), purpose: 'user_data' });
    expect(files[2].content_type).toBe('application/pdf');
    const page = await call('list_files', { limit: 2 });
    expect(page.structuredContent).toMatchObject({ has_more: true, last_id: uploaded.html });
    const next = await call('list_files', { limit: 2, after: uploaded.html });
    expect((next.structuredContent?.files as Array<{ id: string }>).map((file) => file.id)).toEqual([
      uploaded.pdf,
      uploaded.md,
    ]);
    expect(next.structuredContent?.has_more).toBe(false);
  });

  it('read_file gives Markdown as written, PDF and HTML as extracted text, and truncates at max_chars', async () => {
    const md = await call('read_file', { file_id: uploaded.md });
    expect(md.structuredContent).toMatchObject({
      file_id: uploaded.md,
      filename: 'keeping.md',
      text: KEEPING,
      truncated: false,
    });
    expect(md.content[0].text).toBe(KEEPING);
    const pdf = await call('read_file', { file_id: uploaded.pdf });
    expect(pdf.isError, pdf.content[0].text).toBeFalsy();
    for (const line of PDF_LINES) {
      expect(String(pdf.structuredContent?.text)).toContain(line);
    }
    const html = await call('read_file', { file_id: uploaded.html });
    expect(html.structuredContent?.text).toMatch(/Daybook\s+Three ships passed the reef at noon\./);
    expect(html.structuredContent?.text).not.toMatch(/<|hidden/);
    const short = await call('read_file', { file_id: uploaded.md, max_chars: 19 });
    expect(short.structuredContent).toMatchObject({ text: '# Lighthouse keepin', truncated: true });
    expect(short.content[0].text).toMatch(/Truncated after 19 characters/);
  });

  it("read_file refuses an image as not text, and another key's file as not found", async () => {
    const image = await call('read_file', { file_id: uploaded.png });
    expect(image.isError).toBe(true);
    expect(image.content[0].text).toMatch(/picture\.png, image\/png\) is not text.*422 file_not_text/);
    const others = await call('read_file', { file_id: uploaded.othersMd });
    expect(others.isError).toBe(true);
    expect(others.content[0].text).toMatch(new RegExp(`No file '${uploaded.othersMd}'.*404 file_not_found`));
  });

  it('embed returns the vectors of POST /v1/embeddings (local:embed), and refuses an empty text', async () => {
    const result = await call('embed', {
      input: ['the keeper lights the lamp', 'ships pass the reef'],
      dimensions: 32,
    });
    expect(result.isError).toBeFalsy();
    const output = result.structuredContent as { model: string; embeddings: number[][]; dimensions: number };
    expect(output.model).toBe('local:embed');
    expect(output.dimensions).toBe(32);
    expect(output.embeddings).toHaveLength(2);
    const norm = Math.hypot(...output.embeddings[0]!);
    expect(norm).toBeCloseTo(1, 5);
    expect(result.content[0].text).toContain('2 embedding(s) of 32 dimensions by local:embed');
    const empty = await call('embed', { input: '' });
    expect(empty.isError).toBe(true);
  });

  it('generate_image returns a decodable image inline and a signed URL', async () => {
    const result = await call('generate_image', { prompt: 'a red fox in snow', size: '128x96' });
    expect(result.isError).toBeFalsy();
    const image = result.content.find((block) => block.type === 'image');
    expect(image?.mimeType).toBe('image/png');
    const metadata = await sharp(Buffer.from(image!.data!, 'base64')).metadata();
    expect([metadata.width, metadata.height]).toEqual([128, 96]);
    const fetched = await fetch((result.structuredContent?.images as Array<{ url: string }>)[0].url);
    expect(fetched.headers.get('content-type')).toBe('image/png');
  });
});

describe('every tool, offline (v2 client, auto negotiation)', () => {
  let client: AnyClient;
  let schemas: Map<string, Record<string, unknown> | undefined>;
  beforeAll(async () => {
    client = (await connectV2('auto')).client;
    schemas = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.outputSchema]));
  });
  afterAll(async () => {
    await client?.close();
  });

  it('text_to_speech returns MP3 audio content', async () => {
    const result = (await client.callTool({
      name: 'text_to_speech',
      arguments: { input: 'Hello from the gateway.' },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    checkAgainst(schemas.get('text_to_speech'), result.structuredContent);
    const audio = result.content.find((block) => block.type === 'audio');
    expect(audio?.mimeType).toBe('audio/mpeg');
    const bytes = Buffer.from(audio!.data!, 'base64');
    // An MP3 starts with an ID3 tag or a frame sync (11 set bits).
    expect(bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0)).toBe(
      true,
    );
    expect(result.structuredContent?.seconds).toBeGreaterThan(0.5);
  });

  it('generate_music returns MP3 audio of the asked length', async () => {
    const result = (await client.callTool({
      name: 'generate_music',
      arguments: { prompt: 'calm piano', duration: 3 },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    checkAgainst(schemas.get('generate_music'), result.structuredContent);
    expect(result.structuredContent?.seconds).toBeCloseTo(3, 0);
    expect(result.content.some((block) => block.type === 'audio' && block.mimeType === 'audio/mpeg')).toBe(true);
  });

  it('create_video with wait_seconds reports progress and ends with a signed MP4 link; get_video shows the same task', async () => {
    const progress: number[] = [];
    const result = (await client.callTool(
      {
        name: 'create_video',
        arguments: { prompt: 'a lighthouse at dusk', size: '128x96', seconds: '4', wait_seconds: 120 },
      },
      { onprogress: (update) => progress.push(update.progress), timeout: 150_000 },
    )) as ToolResult;
    expect(result.isError, result.content[0].text).toBeFalsy();
    checkAgainst(schemas.get('create_video'), result.structuredContent);
    expect(result.structuredContent).toMatchObject({ status: 'completed', progress: 100, size: '128x96' });
    expect(progress.at(-1)).toBe(100);
    const link = result.content.find((block) => block.type === 'resource_link');
    const mp4 = Buffer.from(await (await fetch(link!.uri!)).arrayBuffer());
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const again = (await client.callTool({
      name: 'get_video',
      arguments: { id: result.structuredContent?.id },
    })) as ToolResult;
    checkAgainst(schemas.get('get_video'), again.structuredContent);
    expect(again.structuredContent).toMatchObject({ id: result.structuredContent?.id, status: 'completed' });
  }, 180_000);

  it('get_video of an unknown id is an isError result naming the 404', async () => {
    const result = (await client.callTool({ name: 'get_video', arguments: { id: 'video_nope' } })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/No video task 'video_nope'.*404 video_not_found/);
  });

  it('records one usage row per tool call, naming the tool in the operation', async () => {
    await client.callTool({ name: 'chat', arguments: { prompt: 'count me' } });
    await started.testApp.usage.flush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const rows = started.testApp.db
      .prepare("SELECT operation, model FROM usage_records WHERE operation LIKE 'mcpPost:%'")
      .all() as Array<{ operation: string; model: string }>;
    expect(rows).toEqual(
      expect.arrayContaining([
        { operation: 'mcpPost:chat', model: 'local:chat' },
        { operation: 'mcpPost:text_to_speech', model: 'local:speech' },
      ]),
    );
  });
});

describe('refusals', () => {
  it('a wrong key is a 401 with the bearer challenge', async () => {
    const response = await fetch(url(), {
      method: 'POST',
      headers: {
        authorization: 'Bearer nope',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="omnigate"');
    // A JSON-RPC error, as every answer of the endpoint: an MCP client reads the refusal, not an OpenAI body.
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Invalid API key.' },
    });
    await expect(connectV2('legacy', 'nope')).rejects.toBeInstanceOf(SdkHttpError);
  });

  it.each([
    ['https://evil.example', 403],
    ['http://localhost:5173', 200],
    ['http://127.0.0.1:3000', 200],
    ['http://[::1]:8080', 200],
  ])('Origin %s → %i', async (origin, status) => {
    const response = await fetch(url(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${started.key}`,
        origin,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(response.status).toBe(status);
    if (status === 403) {
      expect(await response.json()).toMatchObject({
        jsonrpc: '2.0',
        error: { message: expect.stringMatching(/OMNIGATE_MCP_ALLOWED_ORIGINS/) },
      });
    }
  });

  it('an origin listed in OMNIGATE_MCP_ALLOWED_ORIGINS passes; GET still answers 405 after the Origin rule', async () => {
    const t = await createTestApp({ tools: { mcpAllowedOrigins: ['https://app.example.com'] } });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const send = (origin: string) =>
      request(t.app)
        .post('/v1/mcp')
        .set('authorization', `Bearer ${t.key}`)
        .set('origin', origin)
        .set('accept', 'application/json, text/event-stream')
        .send(initialize);
    expect((await send('https://app.example.com')).status).toBe(200);
    expect((await send('https://other.example.com')).status).toBe(403);
    expect(
      (
        await request(t.app)
          .get('/v1/mcp')
          .set('authorization', `Bearer ${t.key}`)
          .set('origin', 'https://other.example.com')
      ).status,
    ).toBe(403);
    expect(
      (
        await request(t.app)
          .get('/v1/mcp')
          .set('authorization', `Bearer ${t.key}`)
          .set('origin', 'https://app.example.com')
      ).status,
    ).toBe(405);
  });

  it('a key limited to local:chat may chat but gets an isError 403 from generate_image', async () => {
    const { client } = await connectV2('auto', limitedKey);
    try {
      const chat = (await client.callTool({ name: 'chat', arguments: { prompt: 'hi' } })) as ToolResult;
      expect(chat.isError).toBeFalsy();
      const image = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'a fox' } })) as ToolResult;
      expect(image.isError).toBe(true);
      expect(image.content[0].text).toMatch(/may not use the model 'local:image'.*403 model_not_allowed/);
    } finally {
      await client.close();
    }
  });
});
