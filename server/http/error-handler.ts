/**
 * The single terminal error middleware: the only place that writes an error body. It turns validator
 * errors, body-parser errors, our ApiErrors and unknown failures into one ApiError, logs it (4xx at info,
 * the rest at error with the cause), and renders it in the envelope of the request's API family.
 */
import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../core/api-error.js';
import { cutText } from '../core/quote-value.js';
import { errorEnvelope } from '../formats/error-envelopes.js';
import { apiFamilyOf } from './api-family.js';
import { drainUnreadBody } from './drain-early-answer.js';
import { UNKNOWN_PATH_MESSAGE } from './outside-the-contract.js';

interface ValidatorError {
  status?: number;
  message?: string;
  errors?: Array<{ path?: string; message?: string; errorCode?: string }>;
  headers?: Record<string, string>;
}

/**
 * `/body/messages/0/content` → `messages.0.content`. Only paths into the request name a param: the
 * validator puts the URL path there for some errors (415), which names no field.
 */
function paramFromPath(path: string | undefined): string | null {
  const match = path ? /^\/?(?:body|query|params|path|headers)(?:\/|$)(.*)$/.exec(path) : null;
  return match?.[1] ? match[1].split('/').join('.') : null;
}

const MAX_MESSAGE_CHARS = 500;
const MAX_PARAM_CHARS = 200;

function cutParam(param: string | null): string | null {
  return param === null ? null : cutText(param, MAX_PARAM_CHARS);
}

/**
 * Completes the validator's "must be equal to constant" (a value outside a set of `const` branches, which
 * it reports without the set) with the values the contract allows there.
 */
export function nameAllowedValues(error: unknown, allowedAt: (path: string) => unknown[]): void {
  const first = isValidatorError(error) ? error.errors?.[0] : undefined;
  if (first?.path && first.message === 'must be equal to constant') {
    const allowed = allowedAt(first.path);
    if (allowed.length > 0) {
      first.message = `must be one of: ${allowed.map((value) => JSON.stringify(value)).join(', ')}`;
    }
  }
}

/**
 * Turns the validator's "must NOT be valid" for fields that exclude each other into a message naming them,
 * with the last one as the error's `param`.
 */
export function nameExclusiveFields(error: unknown, exclusiveAt: (path: string) => string[]): void {
  const first = isValidatorError(error) ? error.errors?.[0] : undefined;
  if (first?.path && first.message === 'must NOT be valid') {
    const fields = exclusiveAt(first.path);
    if (fields.length > 1) {
      const last = fields[fields.length - 1];
      first.path = `${first.path}/${last}`;
      first.message = `cannot be sent together with ${fields
        .slice(0, -1)
        .map((name) => `\`${name}\``)
        .join(', ')}: send only one of ${fields.map((name) => `\`${name}\``).join(', ')}`;
    }
  }
}

/**
 * A string-or-array field (`stop`, `input`) whose array is over its `maxItems` fails both `oneOf` branches, and
 * the validator lists the string branch first ("must be string"): the bound is the error that names the problem.
 */
function overItemsError(error: ValidatorError): NonNullable<ValidatorError['errors']>[number] | undefined {
  const first = error.errors?.[0];
  return error.errors?.find(
    (candidate) => candidate.errorCode === 'maxItems.openapi.validation' && candidate.path === first?.path,
  );
}

function isValidatorError(error: unknown): error is ValidatorError & { status: number } {
  return (
    typeof error === 'object' &&
    error !== null &&
    Array.isArray((error as ValidatorError).errors) &&
    typeof (error as ValidatorError).status === 'number'
  );
}

/** Turns anything thrown into an ApiError; exported for the streaming routes, which render errors as events. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) {
    return error;
  }
  if (isValidatorError(error)) {
    const first = overItemsError(error) ?? error.errors?.[0];
    const status = error.status;
    if (status === 500) {
      // A response that breaks the spec, or a spec that failed to load: our bug, not the caller's.
      return new ApiError(500, 'Internal server error; quote the request id when reporting it.', {
        code: 'internal_error',
        cause: error,
      });
    }
    const message =
      status === 405
        ? `Method not allowed: ${error.message ?? ''}`.trim()
        : status === 404
          ? UNKNOWN_PATH_MESSAGE
          : first
            ? `${first.path ?? ''} ${first.message ?? ''}`.trim()
            : (error.message ?? 'Invalid request');
    // The path names the caller's own keys, which can be megabytes long: the message stays readable.
    const bounded = cutText(message, MAX_MESSAGE_CHARS);
    const code =
      status === 415
        ? 'unsupported_media_type'
        : status === 404
          ? 'unknown_path'
          : status === 405
            ? 'method_not_allowed'
            : null;
    // A 405 must say which methods the path has (RFC 9110); the validator computed them from the spec.
    const allow = status === 405 ? error.headers?.Allow : undefined;
    return new ApiError(status, bounded, {
      param: status === 404 || status === 405 ? null : cutParam(paramFromPath(first?.path)),
      code,
      headers: allow ? { allow } : undefined,
    });
  }
  const bodyParser = error as { type?: string; status?: number; limit?: number; message?: string };
  if (bodyParser && typeof bodyParser.type === 'string' && typeof bodyParser.status === 'number') {
    if (bodyParser.type === 'entity.too.large') {
      return new ApiError(413, `The request body exceeds the limit of ${bodyParser.limit} bytes.`, {
        code: 'request_too_large',
      });
    }
    if (bodyParser.type === 'entity.parse.failed') {
      return new ApiError(400, `The request body is not valid JSON: ${bodyParser.message}`, { code: 'invalid_json' });
    }
    if (bodyParser.type === 'encoding.unsupported' || bodyParser.type === 'charset.unsupported') {
      return new ApiError(415, bodyParser.message ?? 'Unsupported encoding', { code: 'unsupported_media_type' });
    }
    if (bodyParser.status < 500) {
      return new ApiError(bodyParser.status, bodyParser.message ?? 'Invalid request');
    }
  }
  // zlib's failure on a body that claims `Content-Encoding: gzip`/`deflate`/`br` but is not: body-parser marks it
  // as the client's fault (http-errors status 400) without a `type`.
  const zlibCode = (error as { code?: unknown } | null)?.code;
  if (typeof zlibCode === 'string' && (zlibCode.startsWith('Z_') || zlibCode.startsWith('ERR__ERROR_'))) {
    return new ApiError(400, 'The request body could not be decoded with its Content-Encoding.', {
      code: 'invalid_content_encoding',
      cause: error,
    });
  }
  return new ApiError(500, 'Internal server error; quote the request id when reporting it.', {
    code: 'internal_error',
    cause: error,
  });
}

/** The id of a JSON-RPC request body, which its error answer must repeat; null when there is none. */
function jsonRpcId(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  // JSON-RPC ids are strings or integers; anything else cannot be repeated back.
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as string | number) : null;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  // Express recognises error middleware by its four parameters, hence the unused `_next`.
  return (error: unknown, req, res: Response, _next) => {
    const apiError = toApiError(error);
    const requestId = (res.locals.requestId as string | undefined) ?? null;
    // The metrics count refusals by this code (observability/metrics.ts).
    res.locals.errorCode = apiError.code;
    const log = {
      requestId,
      status: apiError.status,
      type: apiError.type,
      code: apiError.code,
      method: req.method,
      path: req.path,
    };
    if (apiError.expected) {
      logger.info(log, apiError.message);
    } else {
      logger.error({ ...log, err: apiError.cause ?? error }, apiError.message);
    }
    if (apiError.status === 499 || res.destroyed) {
      // The client is gone: there is nobody to answer, and 499 is a log and usage status, not a response.
      return;
    }
    if (res.headersSent) {
      // A stream already started: the route owns the error event; just make sure the response ends.
      if (!res.writableEnded) {
        res.end();
      }
      return;
    }
    for (const [name, value] of Object.entries(apiError.headers)) {
      res.setHeader(name, value);
    }
    if (apiError.status === 401) {
      res.setHeader('www-authenticate', 'Bearer realm="omnigate"');
    }
    // Answered before the body was read (401, 413, …): the rest is read and discarded, up to a bound, so the
    // client still writing it sees this answer rather than a reset connection.
    drainUnreadBody(req);
    // The SDKs retry 408, 409, 429 and every 5xx unless told not to; a bug (500) or a state a retry cannot
    // change is not worth their wait.
    const retryable =
      apiError.retryable ??
      !(apiError.status >= 500 && apiError.status !== 503 && apiError.status !== 502 && apiError.status !== 504);
    if (!retryable) {
      res.setHeader('x-should-retry', 'false');
    }
    const family = apiFamilyOf(req.path);
    res
      .status(apiError.status)
      .json(errorEnvelope(apiError, family, requestId, family === 'mcp' ? jsonRpcId(req.body) : null));
  };
}
