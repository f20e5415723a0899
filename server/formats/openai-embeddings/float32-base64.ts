/**
 * OpenAI's `encoding_format: base64`: the base64 of a vector's float32 values, little-endian (as its SDKs decode
 * it with `Float32Array` on little-endian machines). Written with a DataView, so the byte order is the wire's
 * whatever the machine's.
 */
export function float32ToBase64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < vector.length; index++) {
    view.setFloat32(index * 4, vector[index] ?? 0, true);
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** The vector in `text`, or undefined when it is not base64 of whole float32 values. */
export function base64ToFloat32(text: string): number[] | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    return undefined;
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) {
    return undefined;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector: number[] = new Array(bytes.length / 4);
  for (let index = 0; index < vector.length; index++) {
    vector[index] = view.getFloat32(index * 4, true);
  }
  return vector;
}
