/** Linux: the niceness of each thread of this process (field 19 of /proc/self/task/<tid>/stat); empty elsewhere. */
import { readdirSync, readFileSync } from 'node:fs';

export function threadNiceness(): number[] {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return [];
  }
  const niceness: number[] = [];
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The fields after the command name in parentheses, starting with the state (field 3).
      niceness.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended while the list was read.
    }
  }
  return niceness;
}
