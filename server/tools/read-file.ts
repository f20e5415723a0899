/**
 * `read_file`: the text of one of the caller's own uploaded files (calls/files/read-file-text.ts): text-like files
 * as UTF-8, PDF and HTML through the search index's extraction, anything else an error saying it is not text.
 * Another key's file id is the same "not found" as an unknown one.
 */
import { z } from 'zod';
import { readFileText } from '../calls/files/read-file-text.js';
import { defineTool } from './tool-definition.js';

/** Enough for a long article; a model that wants less asks for less. */
export const DEFAULT_READ_CHARS = 20_000;
const MAX_READ_CHARS = 500_000;

export const readFileTool = defineTool({
  name: 'read_file',
  title: 'Read a file',
  description:
    'The text of a file uploaded with this API key (POST /v1/files; ids from list_files): plain text, Markdown, CSV and JSON as written, HTML and PDF as extracted text. Other files (images, audio, archives) are refused as not text.',
  input: z.object({
    file_id: z.string().min(1).max(128).describe('The file id, as list_files shows it.'),
    max_chars: z
      .number()
      .int()
      .min(1)
      .max(MAX_READ_CHARS)
      .optional()
      .describe(`The most characters to return; ${DEFAULT_READ_CHARS} when absent.`),
  }),
  output: z.object({
    file_id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    bytes: z.number().int(),
    text: z.string(),
    truncated: z.boolean().describe('The file holds more text than was returned.'),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
  async run(input, { deps, scope }) {
    const now = deps.now ?? Date.now;
    const maxChars = input.max_chars ?? DEFAULT_READ_CHARS;
    const { file, text, truncated } = await readFileText(
      { store: deps.files.store, blobs: deps.media.blobs, index: deps.search?.index },
      scope.key.id,
      input.file_id,
      { maxChars, nowSeconds: Math.floor(now() / 1000), signal: scope.signal },
    );
    return {
      output: {
        file_id: file.id,
        filename: file.filename,
        content_type: file.mediaType,
        bytes: file.bytes,
        text,
        truncated,
      },
      text: truncated
        ? `${text}\n\n[Truncated after ${text.length} characters; ask with a larger max_chars for more.]`
        : text,
    };
  },
});
