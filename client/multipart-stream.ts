/**
 * A `multipart/form-data` body built as a stream, for files that should not be read into memory first
 * (FormData needs a Blob; a Node `Readable` or a `ReadableStream` is neither). Field and file names are escaped
 * as the WHATWG HTML spec serialises them (`"` → `%22`, CR → `%0D`, LF → `%0A`), which servers decode back.
 */

export interface StreamedFilePart {
  field: string;
  filename: string;
  contentType?: string;
  data: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
}

function escapeName(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

async function* chunksOf(data: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (Symbol.asyncIterator in data) {
    yield* data as AsyncIterable<Uint8Array>;
    return;
  }
  const reader = (data as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        return;
      }
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** The body (fields first, then the file) and the `Content-Type` naming its boundary. */
export function multipartStream(
  fields: Record<string, string>,
  file: StreamedFilePart,
): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = `----omnigate${crypto.randomUUID().replace(/-/g, '')}`;
  const encoder = new TextEncoder();
  const head =
    Object.entries(fields)
      .map(
        ([name, value]) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"\r\n\r\n${value}\r\n`,
      )
      .join('') +
    `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(file.field)}"; filename="${escapeName(file.filename)}"\r\n` +
    `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`;
  const parts = (async function* () {
    yield encoder.encode(head);
    yield* chunksOf(file.data);
    yield encoder.encode(`\r\n--${boundary}--\r\n`);
  })();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await parts.next();
      if (next.done) {
        controller.close();
      } else {
        controller.enqueue(next.value);
      }
    },
    async cancel(reason) {
      await parts.throw?.(reason).catch(() => undefined);
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
