const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Parses "5s,5m,30m,2h" (or plain milliseconds) into milliseconds; throws naming the bad item. */
export function parseDurations(text: string): number[] {
  return text.split(',').map((item) => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(item)
    if (!match) throw new Error(`not a duration: "${item}" (use e.g. 5s, 5m, 2h)`)
    return Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']!)
  })
}
