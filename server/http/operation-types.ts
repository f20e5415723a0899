/**
 * Handler types derived from the generated contract types, so a handler's body, params, query and JSON
 * answer are checked by the compiler against `openapi/api.yaml`.
 */
import type { NextFunction, Request, Response } from 'express';
import type { operations } from '../../generated/api.js';

export type OperationId = keyof operations;
type Operation<O extends OperationId> = operations[O];
type NeverTo<T, D> = [T] extends [never] ? D : T;
type ContentOf<R> = R extends { content: infer C } ? C : never;
type JsonOf<C> = C extends { 'application/json': infer B } ? B : never;
type Responses<O extends OperationId> = Operation<O>['responses'];

export type PathParams<O extends OperationId> = Operation<O>['parameters'] extends { path: infer P }
  ? NeverTo<NonNullable<P>, object>
  : object;
export type QueryParams<O extends OperationId> = Operation<O>['parameters'] extends { query?: infer Q }
  ? NeverTo<NonNullable<Q>, object>
  : object;
export type RequestBody<O extends OperationId> =
  Operation<O> extends { requestBody?: { content: infer C } }
    ? C extends { 'application/json': infer J }
      ? J
      : C[keyof C]
    : undefined;
/** The JSON body of the response with status `S`. */
export type ResponseBody<O extends OperationId, S extends keyof Responses<O>> = JsonOf<ContentOf<Responses<O>[S]>>;
type AnyJsonResponse<O extends OperationId> = NeverTo<JsonOf<ContentOf<Responses<O>[keyof Responses<O>]>>, unknown>;

export type OperationRequest<O extends OperationId> = Request<
  PathParams<O>,
  AnyJsonResponse<O>,
  RequestBody<O>,
  QueryParams<O>
>;
export type OperationHandler<O extends OperationId> = (
  req: OperationRequest<O>,
  res: Response<AnyJsonResponse<O>>,
  next: NextFunction,
) => unknown;

/** One handler for every operation of the contract: a missing operation is a compile error. */
export type Handlers = { [O in OperationId]: OperationHandler<O> };
