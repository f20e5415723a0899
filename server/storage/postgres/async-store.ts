/** Until the store interfaces are async themselves: each method of `T`, answering a promise of what it answered. */
export type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K];
};
