/** Exponential backoff with jitter for failed jobs: 2 s, 4 s, 8 s ... capped at an hour. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(2 ** Math.max(attempt, 1) * 1000, 3_600_000)
  // +-20% so jobs that failed together do not retry together.
  return Math.round(base * (0.8 + random() * 0.4))
}
