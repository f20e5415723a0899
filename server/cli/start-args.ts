/**
 * The arguments of `omnigate start`: only `--workers N` (or `--workers=N`, N an integer or `auto`). The value is
 * handed on as OMNIGATE_WORKERS, where config.ts checks it like every other setting.
 */

export const START_USAGE = 'omnigate start [--workers N|auto]';

/** The value of `--workers`, undefined without arguments, null when the arguments are anything else. */
export function startWorkers(args: string[]): string | undefined | null {
  if (args.length === 0) {
    return undefined;
  }
  const first = args[0]!; // args is not empty
  const inline = first.startsWith('--workers=');
  const flag = inline ? '--workers' : first;
  const value = inline ? first.slice('--workers='.length) : args[1];
  if (flag !== '--workers' || !value || args.length !== (inline ? 1 : 2)) {
    return null;
  }
  return value;
}
