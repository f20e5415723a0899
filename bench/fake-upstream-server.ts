/**
 * The fake OpenAI-compatible upstream of `npm run bench`, in a process of its own (so its CPU is neither the load
 * generator's nor the gateway's): a fixed chat completion, or the same as SSE frames when `stream` is true.
 */
import { createServer, type Server } from 'node:http';

const COMPLETION = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1732240000,
  model: 'bench-model',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog.' },
      finish_reason: 'stop',
      logprobs: null,
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
});

function streamFrames(): string {
  const words = 'The quick brown fox jumps over the lazy dog .'.split(' ');
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1732240000, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1732240000, model: 'bench-model', choices: [], usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 } })}\n\n`;
  return `${chunk({ role: 'assistant', content: '' }, null) + words.map((w) => chunk({ content: ` ${w}` }, null)).join('') + chunk({}, 'stop') + usage}data: [DONE]\n\n`;
}

function startUpstream(port: number): Promise<Server> {
  const frames = streamFrames();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = (text ? JSON.parse(text) : {}) as { stream?: boolean };
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(frames);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(COMPLETION);
      }
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

const server = await startUpstream(Number(process.env.PORT));
server.keepAliveTimeout = 65_000;
// The bench waits for /health on every child; the upstream answers any path, so it needs nothing more.
process.on('SIGTERM', () => server.close(() => process.exit(0)));
