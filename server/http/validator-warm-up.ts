/**
 * Builds the contract validator's code for every operation at start, instead of on each operation's first call.
 * express-openapi-validator compiles an operation's request and response validators when the operation is first
 * called (ajv code generation): about 1.5 s of CPU for the first call after a start and 0.1–0.3 s for each
 * operation after it, all on the event loop, so whoever came first after a deploy waited for it and held up
 * every other call meanwhile.
 *
 * One synthetic request per operation goes through the application's own validator middleware (its caches are
 * what is warmed), mounted in a small app of its own that listens on a loopback port only while warming: no
 * authentication, handler, usage record, access line or metric sees these requests. Each carries an empty JSON
 * object (or nothing, for operations without a JSON body), is refused or passed by the request validator, goes on
 * either way, and ends with an empty JSON answer so that the response validators of its route are built too.
 * A multipart operation (file uploads, transcriptions, translations) gets a form of one text field and no file:
 * the validator's form reader (multer) reads it, so no byte is stored, and the request validator refuses it.
 */
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { contractOperations } from '../spec/contract-operations.js';
import type { OpenApiDocument } from '../spec/load-spec.js';

export interface WarmUpReport {
  /** Operations whose validators were built. */
  operations: number;
}

export function validatorWarmUp(
  validator: RequestHandler[],
  document: OpenApiDocument,
  ignore: RegExp,
): () => Promise<WarmUpReport> {
  return async () => {
    const app = express();
    app.use((req, _res, next) => {
      // What the JSON body parser would have made of `{}`; the validator reads `req.body`.
      if (req.headers['content-type'] === 'application/json') {
        req.body = {};
      }
      next();
    });
    // A refused request goes on, so that the response validators of its route are built too (they are built
    // when a response is sent, and a refusal ends a request before its response middleware runs).
    const named = validator.filter((middleware) => middleware.name === 'requestMiddleware');
    if (named.length !== 1) {
      throw new Error('validator warm-up: express-openapi-validator has no requestMiddleware (was it upgraded?)');
    }
    app.use(
      validator.map(
        (middleware): RequestHandler =>
          middleware.name === 'requestMiddleware' ? (req, res, next) => middleware(req, res, () => next()) : middleware,
      ),
    );
    app.use((_req, res) => {
      res.json({});
    });
    app.use(((_error, _req, res, _next) => {
      // A refusal by a request or response validator is the expected end: the validators are built by now.
      if (!res.headersSent) {
        res.status(204).end();
      }
    }) satisfies ErrorRequestHandler);

    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let operations = 0;
    try {
      for (const { path, method, operation } of contractOperations(document)) {
        const content = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
        const multipart = content !== undefined && 'multipart/form-data' in content;
        if (ignore.test(path) || (content && !multipart && !('application/json' in content))) {
          continue; // MCP is not the validator's
        }
        const body = multipart
          ? { body: warmUpForm() }
          : content
            ? { headers: { 'content-type': 'application/json' }, body: '{}' }
            : {};
        const answer = await fetch(origin + path.replace(/\{[^}]+\}/g, 'warm-up'), {
          method: method.toUpperCase(),
          ...body,
        });
        await answer.arrayBuffer();
        operations += 1;
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    return { operations };
  };
}

/** A form without a file: read by the validator's multer, refused by its request validator, nothing stored. */
function warmUpForm(): FormData {
  const form = new FormData();
  form.append('model', 'warm-up');
  return form;
}
