// How a card number is found (docs/contract.md, Card data): text is NFKC-normalised (so full-width
// digits are digits), digits count as one run when they stand in groups of three or more with only
// separators between them (as card numbers are written: 4-4-4-4, 4-6-5, with a CVV after), and a run
// is a card number when any 13-19 digit window of it that does not start with 0 passes the Luhn check
// (a number followed by its CVV, a number inside a longer run). No card number starts with 0, and
// any run of zeros passes the check: zero-padded ids and counters are not card numbers.
//
// A run that touches a letter is part of a word, not a written number: generated identifiers (hex
// tokens such as the platform's 64-character instrument tokens, UUIDs, ULIDs) mix digits and letters,
// and any of their digit stretches may pass the check by chance; they are never card numbers. Groups
// of one or two digits (dates, times, version numbers) do not join a run either.

const SHORTEST = 13
const LONGEST = 19

// What people put between the groups of a card number, any number of them: whitespace (non-breaking
// and thin spaces, tabs and newlines included), dots, underscores, slashes, hyphens and dashes, and
// the invisible soft hyphen and zero-width characters. Never a digit, so the scan stays linear.
const SEPARATOR = '[\\s._/\\-\\u00ad\\u200b-\\u200d\\u2010-\\u2015\\u2060\\u2212]'
// Groups of three or more digits; the last may be shorter (a 13-digit number written 4-4-4-1).
const DIGIT_RUN = new RegExp(`(?<![\\p{L}\\p{M}\\d])\\d{3,}(?:${SEPARATOR}+\\d{3,})*(?:${SEPARATOR}+\\d{1,2})?(?![\\p{L}\\p{M}\\d])`, 'gu')
// Masking logs errs the other way: any digits with only separators between them, letters or not
// around them. A masked id in a log line costs nothing; a card number in one is an incident. One
// character class (digits and separators) between the first and the last digit: the same runs as
// `\d(?:SEPARATOR*\d)+`, whose group, repeated once per digit, overflowed the regex engine's stack on a
// run of a few million digits.
const ANY_DIGIT_RUN = new RegExp(`\\d[\\d${SEPARATOR.slice(1, -1)}]*\\d`, 'g')
const NOT_A_DIGIT = /\D/g

// NFKC turns one character into at most three ASCII digits ('⅒' is "1⁄10"), so text with fewer
// than 13 digits when each character outside ASCII counts three cannot hold a card number.
export const MOST_DIGITS_PER_CHARACTER = 3

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

/**
 * True when some window of 13 to 19 consecutive digits, not starting with 0, passes the Luhn check.
 * Linear in the length: prefix sums of each digit as the check counts it, undoubled or doubled, by
 * position parity, give each window's sum in constant time.
 */
export function holdsLuhnWindow(digits: string): boolean {
  const n = digits.length
  if (n < SHORTEST) return false
  if (n === SHORTEST) return digits.charCodeAt(0) !== 48 && isLuhnValid(digits)
  // sums[parity][k]: the sum over positions q < k of the digit undoubled when q % 2 === parity, doubled otherwise.
  const even = new Int32Array(n + 1)
  const odd = new Int32Array(n + 1)
  for (let q = 0; q < n; q++) {
    const d = digits.charCodeAt(q) - 48
    const doubled = d > 4 ? 2 * d - 9 : 2 * d
    even[q + 1] = even[q]! + (q % 2 === 0 ? d : doubled)
    odd[q + 1] = odd[q]! + (q % 2 === 1 ? d : doubled)
  }
  // A window's rightmost digit is undoubled, then every other one going left.
  for (let end = SHORTEST - 1; end < n; end++) {
    const sums = end % 2 === 0 ? even : odd
    const through = sums[end + 1]!
    for (let length = SHORTEST; length <= LONGEST && length <= end + 1; length++) {
      const start = end + 1 - length
      if (digits.charCodeAt(start) !== 48 && (through - sums[start]!) % 10 === 0) return true
    }
  }
  return false
}

/**
 * The cheap test run before anything else: false when the text cannot hold a card number in any
 * form (fewer than 13 ASCII digits, counting each character outside ASCII as the most digits NFKC
 * could make of it). Runs on every request.
 */
export function mayHoldCardNumber(text: string): boolean {
  if (text.length * MOST_DIGITS_PER_CHARACTER < SHORTEST) return false
  let digits = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 48 && code <= 57) digits += 1
    else if (code > 127) digits += MOST_DIGITS_PER_CHARACTER
    else continue
    if (digits >= SHORTEST) return true
  }
  return false
}

const NON_ASCII = /[^\x00-\x7f]/

/** The text as scanned: NFKC-normalised when it has anything outside ASCII (ASCII is its own NFKC form). */
function normalised(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFKC') : text
}

const isCardRun = (run: string) => holdsLuhnWindow(run.replace(NOT_A_DIGIT, ''))

/** True when the text holds something that looks like a primary account number. */
export function containsCardNumber(text: string): boolean {
  if (!mayHoldCardNumber(text)) return false
  for (const match of normalised(text).matchAll(DIGIT_RUN)) {
    if (isCardRun(match[0])) return true
  }
  return false
}

/** Where a card number is: the JSON pointer of a value, or of the object one of whose keys holds it. */
export interface CardNumberLocation {
  path: string
  /** True when it is in a key: the pointer then names the object, since the key itself must not be repeated. */
  inKey: boolean
}

/**
 * Walks any JSON-like value and returns where the first string, integer or object key holding a card
 * number is, so the error can say where without repeating the value.
 */
export function locateCardNumber(value: unknown, path = ''): CardNumberLocation | undefined {
  if (typeof value === 'string') return containsCardNumber(value) ? { path: path || '/', inKey: false } : undefined
  // A card number sent as a JSON number (an integer order id field, say) is still a card number;
  // below 10^21 an integer prints as all its digits (beyond 2^53 the last ones as JSON.parse rounded them).
  if (typeof value === 'number') {
    return Number.isInteger(value) && Math.abs(value) < 1e21 && containsCardNumber(String(value)) ? { path: path || '/', inKey: false } : undefined
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = locateCardNumber(value[i], `${path}/${i}`)
      if (found) return found
    }
    return undefined
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (containsCardNumber(key)) return { path: path || '/', inKey: true }
      const found = locateCardNumber(child, `${path}/${escapePointer(key)}`)
      if (found) return found
    }
  }
  return undefined
}

/** The JSON pointer of locateCardNumber: a value holding a card number, or the object with such a key. */
export function findCardNumber(value: unknown, path = ''): string | undefined {
  return locateCardNumber(value, path)?.path
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

export const CARD_NUMBER_MASK = '[card number removed]'

/**
 * Replaces card-number-like runs in free text (log lines, URLs) with a mask: every run containsCardNumber
 * finds, and also runs it lets pass because they touch letters or have short groups. Text without one comes back unchanged; text with one comes back
 * NFKC-normalised with each such run masked.
 */
export function maskCardNumbers(text: string): string {
  if (!mayHoldCardNumber(text)) return text
  let masked = false
  const result = normalised(text).replace(ANY_DIGIT_RUN, (run) => {
    if (!isCardRun(run)) return run
    masked = true
    return CARD_NUMBER_MASK
  })
  return masked ? result : text
}
