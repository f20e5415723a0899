/**
 * Every project's limits in memory, so the call limiter reads a key's project without a database read per
 * request. Loaded at start; re-read whenever the key change feed says anything changed (a project's change is
 * announced there as a notice naming no key, by this process at once and by the other instances within 1 s)
 * and every `reconcileMs` anyway, for notices that were lost. Projects are few and change rarely: a whole
 * re-read is cheap. A re-read that fails keeps what was held.
 */
import type { Limits } from '../core/limits.js';
import type { KeyChangeFeed } from './key-change-feed.js';
import { KEY_RECONCILE_MS } from './key-cache.js';
import type { ProjectStore } from './project-store.js';

export interface ProjectCache {
  /** The limits of the project of this name, or undefined when there is none. No I/O. */
  limitsOf(name: string): Limits | undefined;
  /** Re-reads the projects (what a change notice runs); resolves when done. */
  reload(): Promise<void>;
  close(): void;
}

export function createProjectCache(
  store: Pick<ProjectStore, 'list'>,
  feed: Pick<KeyChangeFeed, 'subscribe'>,
  options: { reconcileMs?: number; onError?: (error: unknown) => void } = {},
): ProjectCache {
  let held = new Map<string, Limits>();
  let running: Promise<void> | undefined;
  let again = false;

  /** One read at a time; one asked for while a read runs runs after it (it must read after the change). */
  function reload(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          const projects = await store.list();
          held = new Map(projects.map((project) => [project.name, project.limits]));
        } while (again);
      } catch (error) {
        options.onError?.(error);
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  const unsubscribe = feed.subscribe(() => void reload());
  const timer = setInterval(() => void reload(), options.reconcileMs ?? KEY_RECONCILE_MS);
  timer.unref();
  void reload();
  return {
    limitsOf: (name) => held.get(name),
    reload,
    close() {
      unsubscribe();
      clearInterval(timer);
    },
  };
}
