/**
 * `POST /v1/search/answer`: search, then write an answer whose `[n]` markers match its `citations`.
 *
 * The answer model is the request's `model`, else the configured default chat model, else `local:chat`; it is
 * resolved before the search, so an unknown model costs no search. A model that writes from sources itself
 * (`ChatModel.writeFromSources`: the built-in `local:chat`, quoted sentences, every one cited) does so; any other
 * chat model is prompted with the numbered sources and its markers are checked (citation-markers.ts).
 *
 * Streams follow the contract's events: `answer.citations` first, `answer.delta`s, one `answer.done`. A built-in
 * answer is written whole first, so its citation list is exactly the sources it cites. An upstream model's list
 * must go out before its text exists, so it holds every source given to the model (the contract's "sources
 * the answer may cite"), and only markers pointing at none of them are removed from the deltas.
 */
import type { Response } from 'express';
import type { ChatCallOptions, ChatModel, SourcedAnswer, Usage } from '../../core/chat.js';
import type { SearchResult } from '../../core/models.js';
import { randomId } from '../../core/random-id.js';
import { openAiErrorEnvelope } from '../../formats/error-envelopes.js';
import { citationOf, usageOf, type SearchAnswerBody } from '../../formats/search/search-answer.js';
import type { CallScope } from '../../http/call-scope.js';
import { openSse } from '../../http/sse.js';
import { countTextTokens } from '../../tokens/tokenizer.js';
import { createMarkerFilter, renumberCitations } from './citation-markers.js';
import { prepareCall, type PreparedCall } from '../prepare-call.js';
import { runSearch, type SearchDeps, type SearchRequest } from './run-search.js';
import { streamFailure } from '../stream-failure.js';

export const BUILT_IN_ANSWER_MODEL = 'local:chat';
/** The most characters of one source put in a prompt: enough for a passage, not a whole page. */
const SOURCE_CHARS = 1_500;
const NO_SOURCES = 'No sources were found for this question.';

export interface AnswerDeps extends SearchDeps {
  /** The configured default chat model (`default_chat_model`). */
  defaultAnswerModel?: string;
}

export interface SearchAnswerRequest extends SearchRequest {
  stream?: boolean;
}

const sourceText = (result: SearchResult) => (result.passage ?? result.snippet).slice(0, SOURCE_CHARS);

export function answerPrompt(query: string, results: SearchResult[]): ChatCallOptions {
  const sources = results
    .map((result, index) => `[${index + 1}] ${result.title}\n${result.url}\n${sourceText(result)}`)
    .join('\n\n');
  return {
    messages: [
      {
        role: 'system',
        content: [
          {
            type: 'text',
            text:
              'Answer the question using only the numbered sources. After every sentence that uses a source, cite it with its number in ' +
              'square brackets, such as [1] or [2][3]. Cite only the numbers listed. If the sources do not answer the question, say so briefly.',
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: `Sources:\n\n${sources}\n\nQuestion: ${query}` }] },
    ],
  };
}

/** The built-in writer's answer, with its token counts (what the question and sources were, what was written). */
async function builtInAnswer(
  write: (query: string, sources: Array<{ text: string }>) => SourcedAnswer,
  query: string,
  results: SearchResult[],
) {
  const written = write(
    query,
    results.map((result) => ({ text: result.passage ?? result.snippet })),
  );
  const citations = written.order.map((source, index) => citationOf(results[source]!, index + 1));
  const inputTokens = await countTextTokens([query, ...results.map(sourceText)].join('\n'));
  const outputTokens = await countTextTokens(written.answer);
  return { answer: written.answer, sentences: written.sentences, citations, usage: { inputTokens, outputTokens } };
}

/** The answer model resolved (before the search, so an unknown model costs none) and the sources found. */
async function searchForAnswer(deps: AnswerDeps, scope: CallScope, body: SearchRequest) {
  const record = scope.call;
  const chat = prepareCall(deps, scope, body.model ?? deps.defaultAnswerModel ?? BUILT_IN_ANSWER_MODEL, 'chat');
  const named = { modelRequested: record.modelRequested, model: record.model, provider: record.provider };
  // `model` names the answer's writer; the search itself runs on the configured default search model.
  // Its deployment and attempts go to the record's `search_*` fields and headers: the plain ones describe the
  // model that writes the answer (absent for the built-in writer).
  const { results, filesIndexing } = await runSearch(deps, scope, { ...body, model: undefined }, 'search-step');
  // The usage record names the model that wrote the answer; the search is counted in `media`.
  Object.assign(record, named);
  return {
    chat,
    results,
    /** Spread into the answer (and the citations event): how many of the key's files are not searchable yet. */
    pending: filesIndexing ? { files_indexing: filesIndexing } : {},
    id: randomId('ans'),
    model: chat.resolved.entry.id,
    builtIn: chat.model.writeFromSources !== undefined || results.length === 0,
  };
}

/** No sources: the fixed answer, whatever the model; else the model's own writing from them. */
async function builtInOrEmptyAnswer(model: ChatModel, query: string, results: SearchResult[]) {
  const write = model.writeFromSources?.bind(model);
  return results.length === 0 || !write
    ? { answer: NO_SOURCES, sentences: [NO_SOURCES], citations: [], usage: { inputTokens: 0, outputTokens: 0 } }
    : builtInAnswer(write, query, results);
}

/** `POST /v1/search/answer` without `stream`, and the `search_answer` tool: the whole answer as one object. */
export async function answerQuestion(
  deps: AnswerDeps,
  scope: CallScope,
  body: SearchRequest,
): Promise<SearchAnswerBody> {
  const record = scope.call;
  const { chat, results, id, model, builtIn, pending } = await searchForAnswer(deps, scope, body);
  if (builtIn) {
    const written = await builtInOrEmptyAnswer(chat.model, body.query, results);
    record.usage = written.usage;
    return {
      object: 'search.answer',
      id,
      model,
      query: body.query,
      answer: written.answer,
      citations: written.citations,
      usage: usageOf(written.usage),
      ...pending,
    };
  }
  const result = await chat.model.generate(answerPrompt(body.query, results), chat.context);
  record.usage = result.usage;
  const text = result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const { answer, order } = renumberCitations(text, results.length);
  const citations = order.map((source, index) => citationOf(results[source - 1]!, index + 1));
  return {
    object: 'search.answer',
    id,
    model,
    query: body.query,
    answer,
    citations,
    usage: usageOf(result.usage),
    ...pending,
  };
}

export async function sendSearchAnswer(
  deps: AnswerDeps,
  scope: CallScope,
  res: Response,
  body: SearchAnswerRequest,
): Promise<void> {
  if (!body.stream) {
    res.json(await answerQuestion(deps, scope, body));
    return;
  }
  const record = scope.call;
  const { chat, results, builtIn, pending } = await searchForAnswer(deps, scope, body);
  if (builtIn) {
    const written = await builtInOrEmptyAnswer(chat.model, body.query, results);
    record.usage = written.usage;
    const usage = usageOf(written.usage);
    const sse = openSse(res);
    sse.send({
      event: 'answer.citations',
      data: { type: 'answer.citations', citations: written.citations, ...pending },
    });
    written.sentences.forEach((sentence, index) => {
      sse.send({
        event: 'answer.delta',
        data: { type: 'answer.delta', delta: index === 0 ? sentence : ` ${sentence}` },
      });
    });
    sse.send({ event: 'answer.done', data: { type: 'answer.done', answer: written.answer, usage } });
    sse.end();
    return;
  }
  await streamUpstreamAnswer(res, chat, answerPrompt(body.query, results), results, pending);
}

async function streamUpstreamAnswer(
  res: Response,
  chat: PreparedCall<'chat'>,
  prompt: ChatCallOptions,
  results: SearchResult[],
  pending: { files_indexing?: number },
): Promise<void> {
  const record = chat.call;
  const iterator = chat.model.stream(prompt, chat.context)[Symbol.asyncIterator]();
  // Awaited before any header, so an upstream refusal is still a plain HTTP error.
  let step = await iterator.next();
  record.defer();
  const sse = openSse(res);
  const filter = createMarkerFilter(results.length);
  let answer = '';
  let usage: Usage | undefined;
  let status = 200;
  const emit = (delta: string) => {
    if (delta) {
      answer += delta;
      sse.send({ event: 'answer.delta', data: { type: 'answer.delta', delta } });
    }
  };
  try {
    sse.send({
      event: 'answer.citations',
      data: {
        type: 'answer.citations',
        citations: results.map((result, index) => citationOf(result, index + 1)),
        ...pending,
      },
    });
    while (!step.done) {
      if (step.value.type === 'text-delta') {
        emit(filter.push(step.value.text));
      } else if (step.value.type === 'finish') {
        usage = step.value.usage;
      }
      step = await iterator.next();
    }
    emit(filter.flush());
    usage ??= {
      inputTokens: await countTextTokens(JSON.stringify(prompt.messages)),
      outputTokens: await countTextTokens(answer),
    };
    sse.send({ event: 'answer.done', data: { type: 'answer.done', answer, usage: usageOf(usage) } });
  } catch (error) {
    const failure = streamFailure(chat, error);
    status = failure.status;
    if (status !== 499) {
      chat.logger.error(
        { requestId: chat.context.requestId, status, err: failure.error.cause ?? error },
        `search answer stream failed after it started: ${failure.error.message}`,
      );
    }
    sse.send({ event: 'error', data: { type: 'error', error: openAiErrorEnvelope(failure.error).error } });
  } finally {
    await iterator.return?.();
    record.usage = usage ?? {
      inputTokens: await countTextTokens(JSON.stringify(prompt.messages)),
      outputTokens: await countTextTokens(answer),
    };
    sse.end();
    record.complete(status);
  }
}
