/** RFC 6901 JSON pointers (`/data/0/b64_json`), for configured mappings of upstream answers. */

/** The value at `pointer`, or `undefined` when any step is missing. */
export function readJsonPointer(document: unknown, pointer: string): unknown {
  if (pointer === '') {
    return document;
  }
  let current = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(token)) {
      current = current[Number(token)];
    } else if (current && typeof current === 'object' && !Array.isArray(current) && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return current;
}
