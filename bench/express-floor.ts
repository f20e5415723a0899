/**
 * The floor for `npm run bench`: a bare Express 5 app that parses a JSON body and answers JSON, run in its
 * own process like the gateway. Its CPU per request is what any Express service pays on this machine, so the
 * gateway's numbers can be read as a multiple of it rather than in absolute terms.
 */
import express from 'express';

const app = express();
app.use(express.json());
app.post('/v1/chat/completions', (req, res) => {
  res.json({
    id: 'floor',
    object: 'chat.completion',
    model: (req.body as { model?: string }).model ?? null,
    choices: [],
  });
});
app.get('/health', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
