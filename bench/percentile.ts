/** The nearest-rank percentile `p` (0–100) of ascending `sorted` values, as the bench's tables report them. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
