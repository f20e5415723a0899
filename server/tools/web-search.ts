/**
 * `web_search` (also `POST /v1/tools/web_search`): the search of `POST /v1/web/search` (calls/search/run-search.ts, results encoded by formats/search/search-result.ts:
 * the same model resolution, key scoping and usage record), its results as structured output and as the
 * numbered plain text a language model reads. The REST operation answers that text as `content`.
 */
import { z } from 'zod';
import { runSearch } from '../calls/search/run-search.js';
import { encodeSearchResult, resultsAsText } from '../formats/search/search-result.js';
import { defineTool } from './tool-definition.js';

const domains = z.array(z.string().min(1).max(253)).max(20);

const result = z.object({
  title: z.string(),
  url: z.string(),
  snippet: z.string(),
  published_at: z.string().nullable(),
  source: z.string(),
  score: z.number().nullable().optional(),
});

export const webSearchTool = defineTool({
  name: 'web_search',
  title: 'Web search',
  description:
    "Search with the gateway's search model and get titled, dated results with links and snippets. The built-in local:search (the default unless another search model is configured) searches the files uploaded with this API key.",
  input: z.object({
    query: z.string().min(1).max(2000).describe('What to search for. Keywords work best.'),
    model: z
      .string()
      .min(1)
      .optional()
      .describe('A search model id or alias of GET /v1/models; the configured default when absent.'),
    max_results: z.number().int().min(1).max(50).optional().describe('The most results to return; 10 when absent.'),
    recency: z
      .enum(['day', 'week', 'month', 'year'])
      .optional()
      .describe('Only results published within the last day, week, month or year.'),
    include_domains: domains
      .optional()
      .describe('Only return results from these hosts (a host covers its subdomains).'),
    exclude_domains: domains.optional().describe('Never return results from these hosts.'),
  }),
  output: z.object({ results: z.array(result) }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async run(input, { deps, scope }) {
    const { results } = await runSearch({ ...deps, defaultSearchModel: deps.search?.defaultSearchModel }, scope, input);
    const output = { results: results.map(encodeSearchResult) };
    return { output, text: resultsAsText(output.results) };
  },
});
