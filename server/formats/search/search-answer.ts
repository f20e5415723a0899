/**
 * `POST /v1/search/answer` on the wire: the answer object (the non-streamed body, and the `search_answer` tool's
 * output), its citations and its usage, as the contract shows them; the streamed events carry the same pieces.
 */
import type { Usage } from '../../core/chat.js';
import type { SearchResult } from '../../core/models.js';

export interface Citation {
  index: number;
  title: string;
  url: string;
  snippet: string;
  published_at: string | null;
}

export interface AnswerUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  search_count: number;
}

export function citationOf(result: SearchResult, index: number): Citation {
  return {
    index,
    title: result.title,
    url: result.url,
    snippet: result.snippet,
    published_at: result.publishedAt ?? null,
  };
}

export function usageOf(usage: Usage): AnswerUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    search_count: 1,
  };
}

/** The answer object of the contract's `SearchAnswer` (the non-streamed body, and the `search_answer` tool's output). */
export interface SearchAnswerBody {
  object: 'search.answer';
  id: string;
  model: string;
  query: string;
  answer: string;
  citations: Citation[];
  usage: AnswerUsage;
  /** The caller's files still being indexed, whose text the answer could not draw on. */
  files_indexing?: number;
}
