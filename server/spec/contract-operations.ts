/**
 * The operations of the contract, walked once the same way wherever they are needed: the mount of the handlers
 * (routes/mount-operations.ts), the validator's warm-up (http/validator-warm-up.ts) and the MCP boundary's methods.
 */
import type { OpenApiDocument } from './load-spec.js';

/** The HTTP methods an operation of the contract can have, in the order the mount visits them. */
export const OPERATION_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type OperationMethod = (typeof OPERATION_METHODS)[number];

export interface ContractOperation {
  path: string;
  method: OperationMethod;
  operation: NonNullable<NonNullable<NonNullable<OpenApiDocument['paths']>[string]>[OperationMethod]>;
}

/** Every operation of `document` with its path and method, path by path in the document's order. */
export function* contractOperations(document: OpenApiDocument): Generator<ContractOperation> {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of OPERATION_METHODS) {
      const operation = item?.[method];
      if (operation) {
        yield { path, method, operation };
      }
    }
  }
}
