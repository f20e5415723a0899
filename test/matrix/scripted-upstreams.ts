/**
 * The matrix's upstreams: the one fake upstream (which records every request), scripted per test with an
 * answer in the upstream's own wire format (see `upstream-scripts.ts`). The two flavours differ only in the
 * base URL the provider is configured with and the request-id header their answers carry.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { startFakeUpstream, type RecordedRequest } from '../fakes/fake-upstream.js';
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

function received(request: RecordedRequest): ReceivedRequest {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    body: (request.body ?? {}) as Record<string, unknown>,
  };
}

async function startScripted(basePath: string, headers: Record<string, string>): Promise<ScriptedUpstream> {
  const fake = await startFakeUpstream();
  const answers: ScriptedAnswer[] = [];
  return {
    baseUrl: `${fake.origin}${basePath}`,
    received: () => fake.requests.map(received),
    answers: () => answers,
    script(answer) {
      fake.requests.splice(0);
      answers.splice(0);
      fake.handle(async (request, res) => {
        const scripted = answer(received(request));
        answers.push(scripted);
        await writeAnswer(res, scripted, headers);
      });
    },
    close: () => fake.close(),
  };
}

/** OpenAI-compatible base URLs end in /v1; the provider appends /chat/completions or /responses. */
export function startScriptedOpenAI(): Promise<ScriptedUpstream> {
  return startScripted('/v1', { 'x-request-id': 'req_fake_openai' });
}

export function startScriptedAnthropic(): Promise<ScriptedUpstream> {
  return startScripted('', { 'request-id': 'req_fake_anthropic' });
}
