const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Parses "5s,5m,30m,2h" (or plain milliseconds) into milliseconds; throws naming the bad item. */
export function parseDurations(text: string): number[] {
  return text.split(',').map((item) => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(item)
    if (!match) throw new Error(`not a duration: "${item}" (use e.g. 5s, 5m, 2h)`)
    return Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']!)
  })
}

/**
 * A wait as a person says it, rounded up to whole units: "40 seconds", "13 minutes", "2 hours",
 * "3 days" (never "741 s").
 */
export function waitInWords(ms: number): string {
  const units: [number, string][] = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'minute'], [1_000, 'second']]
  const seconds = Math.max(1, Math.ceil(ms / 1_000))
  // The largest unit the wait fills at least twice over, or exactly once: 90 s is "90 seconds", 150 s "3 minutes".
  const [size, name] = units.find(([unit]) => seconds * 1_000 >= 2 * unit || seconds * 1_000 === unit) ?? units[3]!
  const count = Math.ceil((seconds * 1_000) / size)
  return `${count} ${name}${count === 1 ? '' : 's'}`
}
