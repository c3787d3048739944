const known = new Map<string, boolean>()

/**
 * Asks the runtime's time-zone database rather than Intl.supportedValuesOf, whose canonical list still
 * says Asia/Calcutta and Europe/Kiev and omits Etc/*. Bare offsets ("+05:30") are not zones: they have no DST rules.
 */
export function isTimeZone(name: string): boolean {
  let valid = known.get(name)
  if (valid === undefined) {
    valid = /^[A-Za-z]/.test(name) && acceptedByIntl(name)
    if (known.size < 1000) known.set(name, valid)
  }
  return valid
}

function acceptedByIntl(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}

/** RFC 3339 UTC with milliseconds, the one time format of the API. */
export function toRfc3339(value: Date): string {
  return value.toISOString()
}

export function toRfc3339OrNull(value: Date | null | undefined): string | null {
  return value ? value.toISOString() : null
}
