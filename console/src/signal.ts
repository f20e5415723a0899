/** A tiny observable value, so the session is shared by every page without a state library. */
import { useEffect, useState } from 'preact/hooks';

export interface Signal<T> {
  get(): T;
  set(value: T): void;
  subscribe(listener: (value: T) => void): () => void;
}

export function signal<T>(initial: T): Signal<T> {
  let value = initial;
  const listeners = new Set<(value: T) => void>();
  return {
    get: () => value,
    set(next) {
      value = next;
      for (const listener of listeners) {
        listener(next);
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export function useSignal<T>(source: Signal<T>): T {
  const [value, setValue] = useState(source.get());
  useEffect(() => source.subscribe(setValue), [source]);
  return value;
}
