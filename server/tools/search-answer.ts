/**
 * `search_answer`: the answer of `POST /v1/search/answer` (not streamed; calls/search/search-answer.ts `answerQuestion`,
 * the same function the route answers with): a search, then an answer whose `[n]` markers match its citations.
 */
import { z } from 'zod';
import { answerQuestion } from '../calls/search/search-answer.js';
import { defineTool } from './tool-definition.js';

export const searchAnswerTool = defineTool({
  name: 'search_answer',
  title: 'Answer from search',
  description:
    'Search, then answer the question from the results with numbered [n] citations. Without `model`, the built-in writer quotes the most relevant sentences of the sources, each cited.',
  input: z.object({
    query: z.string().min(1).max(2000).describe('The question to answer.'),
    model: z
      .string()
      .min(1)
      .optional()
      .describe('The chat model that writes the answer, any id or alias of GET /v1/models.'),
    max_results: z.number().int().min(1).max(50).optional().describe('The most sources to search for; 10 when absent.'),
  }),
  output: z.object({
    id: z.string(),
    model: z.string(),
    answer: z.string(),
    citations: z.array(
      z.object({
        index: z.number().int().min(1),
        title: z.string(),
        url: z.string(),
        snippet: z.string(),
        published_at: z.string().nullable(),
      }),
    ),
    usage: z.object({
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int(),
      total_tokens: z.number().int(),
      search_count: z.number().int(),
    }),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async run(input, { deps, scope }) {
    const answered = await answerQuestion(
      {
        ...deps,
        defaultSearchModel: deps.search?.defaultSearchModel,
        defaultAnswerModel: deps.search?.defaultAnswerModel,
      },
      scope,
      input,
    );
    const { id, model, answer, citations, usage } = answered;
    const sources = citations.map((citation) => `[${citation.index}] ${citation.title} — ${citation.url}`).join('\n');
    return {
      output: { id, model, answer, citations, usage },
      text: sources ? `${answer}\n\nSources:\n${sources}` : answer,
    };
  },
});
