/**
 * The matrix's upstreams: the project's fake OpenAI-compatible and fake Anthropic servers (which record every
 * request), scripted per test with an answer in the upstream's own wire format (see `upstream-scripts.ts`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { startFakeUpstream as startFakeOpenAI } from '../../server/providers/openai-compatible/__fixtures__/fake-upstream.js';
import { startFakeUpstream as startFakeAnthropic } from '../../server/providers/anthropic/fake-upstream.js';
import { writeAnswer, type ScriptedAnswer } from './upstream-scripts.js';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface ScriptedUpstream {
  /** The `base_url` to configure the provider with. */
  baseUrl: string;
  /** Requests received since the last `script`. */
  received(): ReceivedRequest[];
  /** What was last answered. */
  answers(): ScriptedAnswer[];
  /** Answers every following request with `answer(request)`, and forgets earlier requests. */
  script(answer: (request: ReceivedRequest) => ScriptedAnswer): void;
  close(): Promise<void>;
}

export async function startScriptedOpenAI(): Promise<ScriptedUpstream> {
  const fake = await startFakeOpenAI();
  const answers: ScriptedAnswer[] = [];
  const received = () => fake.requests.map((request) => ({ method: request.method, url: request.url, headers: request.headers, body: request.body as Record<string, unknown> }));
  return {
    // OpenAI-compatible base URLs end in /v1; the provider appends /chat/completions or /responses.
    baseUrl: `${fake.origin}/v1`,
    received,
    answers: () => answers,
    script(answer) {
      fake.requests.splice(0);
      answers.splice(0);
      fake.handle(async (request, res) => {
        const scripted = answer({ method: request.method, url: request.url, headers: request.headers, body: request.body as Record<string, unknown> });
        answers.push(scripted);
        await writeAnswer(res, scripted, { 'x-request-id': 'req_fake_openai' });
      });
    },
    close: () => fake.close(),
  };
}

export async function startScriptedAnthropic(): Promise<ScriptedUpstream> {
  const fake = await startFakeAnthropic();
  const answers: ScriptedAnswer[] = [];
  const parse = (text: string) => (text ? (JSON.parse(text) as Record<string, unknown>) : {});
  return {
    baseUrl: fake.url,
    received: () => fake.requests.map((request) => ({ method: request.method, url: request.url, headers: request.headers, body: parse(request.body) })),
    answers: () => answers,
    script(answer) {
      fake.requests.splice(0);
      answers.splice(0);
      fake.handle(async (request, res) => {
        const scripted = answer({ method: request.method, url: request.url, headers: request.headers, body: parse(request.body) });
        answers.push(scripted);
        await writeAnswer(res, scripted, { 'request-id': 'req_fake_anthropic' });
      });
    },
    close: () => fake.close(),
  };
}
