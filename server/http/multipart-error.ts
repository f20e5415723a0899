/**
 * multer's failures, as express-openapi-validator passes them on: it calls a count limit 413 and a form that
 * ends too soon (or any other parse failure of busboy) 500. Only sizes are 413; everything else the client
 * sent wrong is 400, with a message that says what.
 */
import { ApiError } from '../core/api-error.js';

const KNOWN = new Map<string, { status: number; message: string }>([
  ['File too large', { status: 413, message: 'An uploaded file exceeds the size limit of this operation.' }],
  ['Too many parts', { status: 400, message: 'The multipart body has more parts than this operation accepts.' }],
  ['Too many files', { status: 400, message: 'The multipart body has more files than this operation accepts.' }],
  ['Too many fields', { status: 400, message: 'The multipart body has more fields than this operation accepts.' }],
  ['Field name too long', { status: 400, message: 'A multipart field name is too long.' }],
  ['Field value too long', { status: 400, message: 'A multipart field value is too long.' }],
  ['Unexpected file field', { status: 400, message: 'The multipart body has a file in a field that takes none.' }],
]);

/**
 * The ApiError for a failure while the validator read a multipart body, i.e. before any handler ran; undefined
 * for anything that is not such a failure (the 400s of schema validation keep their own message).
 */
export function multipartError(error: unknown): ApiError | undefined {
  const failure = error as { status?: unknown; message?: unknown } | null;
  if (
    typeof failure?.status !== 'number' ||
    typeof failure.message !== 'string' ||
    (![413, 500].includes(failure.status) && !KNOWN.has(failure.message))
  ) {
    return undefined;
  }
  const known = KNOWN.get(failure.message);
  if (known) {
    return new ApiError(known.status, known.message, {
      code: known.status === 413 ? 'request_too_large' : 'invalid_multipart',
    });
  }
  // busboy's parse failures ('Unexpected end of form', 'Malformed part header', …): the body is not a whole form.
  return new ApiError(400, `The multipart body could not be read: ${failure.message}.`, {
    code: 'invalid_multipart',
    cause: error,
  });
}
