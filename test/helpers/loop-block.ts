/**
 * The longest block of the event loop (ms) while `work` runs, in CPU time: the most CPU this process spent between
 * two turns of a 1 ms timer, capped by the wall time between them. Unlike a wall-clock block, other processes on a
 * loaded machine do not lengthen it; threads of this process running beside the loop (GC helpers, the tokenizer or
 * body threads) do count, which only makes a block look longer.
 */
export async function longestBlock(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let lastCpu = process.cpuUsage();
  let lastWall = process.hrtime.bigint();
  let running = true;
  const tick = () => {
    const cpu = process.cpuUsage(lastCpu);
    const wall = process.hrtime.bigint();
    longest = Math.max(longest, Math.min((cpu.user + cpu.system) / 1000, Number(wall - lastWall) / 1e6));
    lastCpu = process.cpuUsage();
    lastWall = wall;
    if (running) {
      setTimeout(tick, 1);
    }
  };
  setTimeout(tick, 1);
  try {
    await work();
    // A block is recorded when the timer finally runs: give it the turn to run.
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    running = false;
  }
  return longest;
}

/** The least of three blocks: a collection of an earlier step's garbage may land in any one of them. */
export async function leastOfThree(work: () => Promise<unknown>): Promise<number> {
  const blocks: number[] = [];
  for (let attempt = 0; attempt < 3; attempt += 1) {
    blocks.push(await longestBlock(work));
  }
  return Math.min(...blocks);
}
