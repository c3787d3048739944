/**
 * Parses PostgreSQL's `timestamptz` text for the `pg` driver: the common form fast, everything else
 * the driver's own way.
 *
 * Why: a subscription row carries up to twelve timestamps, and `pg`'s parser (postgres-date: a
 * general regular expression, then the parts assembled by hand) took ~1.35 µs each, ~10% of a
 * portal list's CPU when many subscribers read at once (BENCHMARKS.md, Portal). PostgreSQL writes a
 * UTC session's values as `YYYY-MM-DD HH:MM:SS[.ffffff]+00`; that exact shape becomes an ISO 8601
 * string the runtime parses natively (~0.66 µs). Any other shape (another offset, a BC or five-digit
 * year, `infinity`) goes to the driver's parser unchanged.
 */
const UTC_SHAPE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?\+00$/

export function parseTimestamptz(text: string, fallback: (text: string) => unknown): unknown {
  if (UTC_SHAPE.test(text)) return new Date(`${text.slice(0, 10)}T${text.slice(11, -3)}Z`)
  return fallback(text)
}
