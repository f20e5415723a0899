/**
 * The JSON text of a caller's value (a tool's JSON Schema), to count its tokens. JSON.stringify recurses and
 * overflows the stack around 10,000 nesting levels; such a value is written without recursion instead, with
 * the same result, so counting never throws.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch (error) {
    if (!(error instanceof RangeError)) {
      throw error;
    }
    return stringifyWithoutRecursion(value);
  }
}

/** JSON.stringify for parsed JSON values (no toJSON, no cycles), with an explicit stack. */
export function stringifyWithoutRecursion(root: unknown): string {
  const out: string[] = [];
  // Work to do, last first: a value to write, or literal text (punctuation, keys).
  const stack: Array<{ value: unknown } | string> = [{ value: root }];
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown } | string;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const value = item.value;
    if (Array.isArray(value)) {
      out.push('[');
      stack.push(']');
      for (let i = value.length - 1; i >= 0; i -= 1) {
        const element: unknown = value[i];
        stack.push({ value: element === undefined || typeof element === 'function' ? null : element });
        if (i > 0) {
          stack.push(',');
        }
      }
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value).filter(([, field]) => field !== undefined && typeof field !== 'function');
      out.push('{');
      stack.push('}');
      for (let i = entries.length - 1; i >= 0; i -= 1) {
        const [key, field] = entries[i]!; // 0 ≤ i < entries.length
        stack.push({ value: field });
        stack.push(`${JSON.stringify(key)}:`);
        if (i > 0) {
          stack.push(',');
        }
      }
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  }
  return out.join('');
}
