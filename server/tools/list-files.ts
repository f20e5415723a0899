/**
 * `list_files`: the files uploaded with the caller's key, newest first, as `GET /v1/files` lists them (the same
 * store query, so another key's files never appear), paged with `after`.
 */
import { z } from 'zod';
import { defineTool } from './tool-definition.js';

const DEFAULT_LIMIT = 20;

export const listFilesTool = defineTool({
  name: 'list_files',
  title: 'List files',
  description:
    'The files uploaded with this API key (POST /v1/files), newest first: id, name, size, type, upload time and purpose. Read one with read_file.',
  input: z.object({
    purpose: z.string().min(1).max(64).optional().describe('Only files uploaded with this purpose.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe(`The most files to list; ${DEFAULT_LIMIT} when absent.`),
    after: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("A file id: list the files after it (the previous page's last_id)."),
  }),
  output: z.object({
    files: z.array(
      z.object({
        id: z.string(),
        filename: z.string(),
        bytes: z.number().int(),
        content_type: z.string(),
        created_at: z.number().int().describe('Unix seconds.'),
        purpose: z.string(),
      }),
    ),
    has_more: z.boolean(),
    last_id: z.string().nullable().describe('Pass as `after` for the next page.'),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(input, { deps, scope }) {
    const now = deps.now ?? Date.now;
    const page = await deps.files.store.list({
      keyId: scope.key.id,
      purpose: input.purpose,
      after: input.after,
      limit: input.limit ?? DEFAULT_LIMIT,
      order: 'desc',
      now: Math.floor(now() / 1000),
    });
    const files = page.files.map((file) => ({
      id: file.id,
      filename: file.filename,
      bytes: file.bytes,
      content_type: file.mediaType,
      created_at: file.createdAt,
      purpose: file.purpose,
    }));
    const lines = files.map(
      (file) =>
        `${file.id}  ${file.filename}  (${file.content_type}, ${file.bytes} bytes, ${file.purpose}, uploaded ${new Date(file.created_at * 1000).toISOString()})`,
    );
    const text =
      files.length === 0
        ? 'No files. Upload files with POST /v1/files.'
        : `${lines.join('\n')}${page.hasMore ? `\n(more: list again with after=${files.at(-1)!.id})` : ''}`;
    return { output: { files, has_more: page.hasMore, last_id: files.at(-1)?.id ?? null }, text };
  },
});
