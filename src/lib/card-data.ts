// A run of 13-19 digits, optionally grouped by single spaces or dashes, as a card number is written.
const DIGIT_RUN = /\d(?:[ -]?\d)+/g

export function isLuhnValid(digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

/** True when the text holds something that looks like a primary account number. */
export function containsCardNumber(text: string): boolean {
  if (text.length < 13) return false
  for (const match of text.matchAll(DIGIT_RUN)) {
    const digits = match[0].replace(/[ -]/g, '')
    if (digits.length >= 13 && digits.length <= 19 && isLuhnValid(digits)) return true
  }
  return false
}

/**
 * Walks any JSON-like value and returns the JSON pointer of the first string or integer that holds a card number,
 * so the error can say where without repeating the value.
 */
export function findCardNumber(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return containsCardNumber(value) ? path || '/' : undefined
  // A card number sent as a JSON number (an integer order id field, say) is still a card number.
  if (typeof value === 'number') return Number.isSafeInteger(value) && containsCardNumber(String(value)) ? path || '/' : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findCardNumber(value[i], `${path}/${i}`)
      if (found) return found
    }
    return undefined
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (containsCardNumber(key)) return `${path}/${escapePointer(key)}`
      const found = findCardNumber(child, `${path}/${escapePointer(key)}`)
      if (found) return found
    }
  }
  return undefined
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** Replaces card-number-like runs in free text (log lines, URLs) with a mask. */
export function maskCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run) => {
    const digits = run.replace(/[ -]/g, '')
    return digits.length >= 13 && digits.length <= 19 && isLuhnValid(digits) ? '[card number removed]' : run
  })
}
