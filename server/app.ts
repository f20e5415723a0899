/**
 * createApp(deps): the Express application, wired in the order that gives every response an id and the
 * right envelope: request start (id, HEAD as GET, usage record, access line) → the console's static files → auth → body parser (size and
 * nesting limits) → contract validation (requests AND JSON responses) → handlers mounted from the spec's own
 * paths → 404/405 for anything else → the one error handler.
 */
import express, { type ErrorRequestHandler, type Express } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { adminKeyCheck, adminPaths } from './auth/admin-key.js';
import { authenticate, publicPaths } from './auth/authenticate.js';
import { UNKNOWN_OPERATION } from './usage/call-record.js';
import { allowedValuesAt, exclusiveFieldsAt } from './http/allowed-values.js';
import { errorHandler, nameAllowedValues, nameExclusiveFields } from './http/error-handler.js';
import { finiteQueryNumbers } from './http/finite-query.js';
import { jsonBody } from './http/json-body.js';
import { jsonDepthLimit } from './http/json-depth.js';
import { multipartError } from './http/multipart-error.js';
import { docsSubpaths, mcpBoundary, unknownPath } from './http/outside-the-contract.js';
import { CONSOLE_PATH, consoleStatic } from './http/console-static.js';
import { requestStart } from './http/request-start.js';
import { uploadOptions, uploadRefusal } from './http/upload-storage.js';
import { transcriptionUploadLimits } from './calls/audio/transcription-upload-limit.js';
import { cacheValidatorRouteRegexps } from './http/validator-route-cache.js';
import { validatorWarmUp, type WarmUpReport } from './http/validator-warm-up.js';
import { restoreLengthBoundErrors, validatorDocument } from './spec/validator-document.js';
import { fileUploadLimit, FILE_BLOB_PREFIX } from './calls/files/file-quota.js';
import type { AppDeps } from './routes/app-deps.js';
import { createHandlers } from './routes/index.js';
import { mountOperations } from './routes/mount-operations.js';

/** JSON-RPC bodies and SSE answers of the MCP transport are not the validator's to judge. */
const MCP_PATHS = /^\/v1\/mcp(\/|$)/;

const warmUps = new WeakMap<Express, () => Promise<WarmUpReport>>();

/**
 * Builds the validator of every JSON operation of `app` now rather than at its first call (http/validator-warm-up.ts);
 * main.ts runs it before listening.
 */
export function warmUpValidator(app: Express): Promise<WarmUpReport> {
  const warmUp = warmUps.get(app);
  if (!warmUp) {
    throw new Error('warmUpValidator: not an application made by createApp');
  }
  return warmUp();
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');

  app.use(requestStart({ logger: deps.logger, usage: deps.usage, now: deps.now, costOf: deps.costOf }));
  // The docs redirects and the web console's static files: no operations of the contract, so neither
  // authenticated nor validated; the console's page signs in with a key and calls the API like any client.
  // One layer for both: each Express layer is a router step on every API request.
  const docsRedirects = docsSubpaths();
  const consoleFiles = consoleStatic(deps.consoleDir);
  app.use((req, res, next) =>
    req.path.startsWith(CONSOLE_PATH) ? consoleFiles(req, res, next) : docsRedirects(req, res, next),
  );
  // Authentication before the body is read: an unauthenticated client never gets its body parsed. The JSON
  // parser refuses a body over the token budget before parsing it (http/json-token-budget.ts).
  app.use(
    authenticate(deps.keyCache, publicPaths(deps.spec.document), {
      paths: adminPaths(deps.spec.document),
      check: deps.adminKey ?? adminKeyCheck(undefined),
    }),
  );
  app.use(jsonBody(deps.maxBodyBytes));
  app.use(jsonDepthLimit());
  cacheValidatorRouteRegexps();
  // The validator reads its own rewritten copy of the contract (spec/validator-document.ts): the same bodies
  // accepted and refused with the same first error, without holding the loop per union branch or per character.
  const validatorSpec = validatorDocument(deps.spec.document);
  const validator = OpenApiValidator.middleware({
    apiSpec: validatorSpec.document as never,
    formats: validatorSpec.formats,
    validateApiSpec: false, // checked once at boot by checkSpec()
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: true,
    validateSecurity: false, // authenticate() above is the enforcement; the spec's schemes document it
    // createFile streams its file to a staged blob; other multipart operations keep small files in memory.
    fileUploader: uploadOptions({
      blobs: deps.media.blobs,
      maxBodyBytes: deps.maxBodyBytes,
      prefix: FILE_BLOB_PREFIX,
      streamed: { createFile: fileUploadLimit(deps) },
      inMemory: transcriptionUploadLimits(deps.transcription),
    }) as never, // multer 2.5 takes `limits` as a function of the request; @types/multer does not know it
    ignorePaths: MCP_PATHS,
    $refParser: { mode: 'bundle' },
  });
  app.use(validator);
  warmUps.set(app, validatorWarmUp(validator, validatorSpec.document, MCP_PATHS));
  app.use(finiteQueryNumbers());
  const operations = operationsById(deps.spec.document);
  // A request the validator refused still names its operation in its usage record. No handler has run yet
  // when the operation is still unnamed, so a multipart failure here is the validator reading the form.
  app.use(((error, req, res, next) => {
    const call = res.locals.call;
    const refusedBeforeHandler = call.operation === UNKNOWN_OPERATION;
    const validatorOperation = (req as { openapi?: { schema?: { operationId?: string } } }).openapi?.schema;
    if (validatorOperation?.operationId) {
      call.operation = validatorOperation.operationId;
    }
    // Messages are explained from the contract as written, not from the validator's rewritten copy.
    const operation = validatorOperation?.operationId ? operations.get(validatorOperation.operationId) : undefined;
    restoreLengthBoundErrors(error);
    nameAllowedValues(error, (path) => allowedValuesAt(deps.spec.document, operation, path));
    nameExclusiveFields(error, (path) => exclusiveFieldsAt(deps.spec.document, operation, path));
    next(
      (refusedBeforeHandler && req.is('multipart/form-data') && (uploadRefusal(req) ?? multipartError(error))) || error,
    );
  }) satisfies ErrorRequestHandler);
  app.use(mcpBoundary(deps.spec.document));
  const router = express.Router();
  mountOperations(router, deps.spec.document, createHandlers(deps), {
    shutdownSignal: deps.shutdownSignal,
    publicUrl: deps.media.publicUrl,
    limiter: deps.limiter,
  });
  app.use(router);
  app.use(unknownPath());
  app.use(errorHandler(deps.logger));
  return app;
}

/** The contract's operations by operationId. */
function operationsById(document: AppDeps['spec']['document']): Map<string, unknown> {
  const operations = new Map<string, unknown>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      const id = (operation as { operationId?: unknown } | null)?.operationId;
      if (typeof id === 'string') {
        operations.set(id, operation);
      }
    }
  }
  return operations;
}
