/**
 * Ajv validators compiled from openapi/api.yaml's component schemas. The request/response validator cannot
 * see what is written with `res.write` (SSE), so stream tests check each event's data with these.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadSpec } from '../../server/spec/load-spec.js';

const document = loadSpec().document;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
ajv.addSchema({ $id: 'omnigate', components: document.components } as object);
const cache = new Map<string, ValidateFunction>();

/** Throws with Ajv's messages when `value` does not match `components.schemas[name]`. */
export function assertMatchesSchema(name: string, value: unknown): void {
  let validate = cache.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `omnigate#/components/schemas/${name}` });
    cache.set(name, validate);
  }
  if (!validate(value)) {
    throw new Error(
      `does not match ${name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`,
    );
  }
}
