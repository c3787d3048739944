// How a card number is found (docs/contract.md, Card data; issue 25). Text is NFKC-normalised (so
// full-width digits are digits), and digits count as one run when they stand in groups of three or
// more with only separators between them (as card numbers are written: 4-4-4-4, 4-6-5), the run
// ending in at most two groups of one or two digits (the last group of a 13-digit number written
// 4-4-4-1, an expiry written MM/YY). A run holds a card number when some consecutive whole groups of
// it, ending at most two groups before its end, make 13-19 digits that are a card number by issuer
// (isCardNumber: a known network's prefix with one of that network's lengths, and Luhn-valid), and
// what follows them is nothing or at most four digits in at most two groups: the card's CVV (3-4
// digits) or its expiry (MMYY, MM/YY, MM-YY). Groups before the number may be anything (a card after
// an order reference in the same run is still found).
//
// Why not more: the rule before this one refused a run when ANY 13-19 digit window of it passed the
// Luhn check. Each window passes by chance one time in ten, so it refused about two in three random
// 16-digit order numbers (a 16-digit run has ten windows) and nearly every 22-digit tracking number:
// real clients failed at random. Whole groups, known issuers and a CVV or expiry at most after the
// number bring that to what the issuers' own number space costs: a random 16-digit number with a
// card prefix (about 30% of them) passes the check one time in ten, so about 3% of random 16-digit
// numbers are indistinguishable from a card, and are refused (test/unit/card-guard-refusal-rates.test.ts
// measures every shape the contract names). What is no longer caught: a card number glued to other
// digits without a separator (`0000${card}`, `${card}123`, a card and its CVV sent as one JSON
// integer), and one followed in its run by more than four digits (a CVV and an expiry both, say).
//
// A run that touches a letter is part of a word, not a written number: generated identifiers (hex
// tokens such as the platform's 64-character instrument tokens, UUIDs, ULIDs) mix digits and letters,
// and any of their digit stretches may pass the check by chance; they are never card numbers. Groups
// of one or two digits (dates, times, version numbers) never start a run and never stand between two
// of its longer groups: at most two of them end one.
//
// Log masking (maskCardNumbers) keeps the broad rule: any digits with only separators between them,
// letters or not around them, with any 13-19 digit window (not starting with 0) passing the Luhn
// check. A harmless number masked in a log line costs nothing; a card number in one is an incident.

const SHORTEST = 13
const LONGEST = 19

// What people put between the groups of a card number, any number of them: whitespace (non-breaking
// and thin spaces, tabs and newlines included), dots, underscores, slashes, hyphens and dashes, and
// the invisible soft hyphen and zero-width characters. Never a digit, so the scan stays linear.
const SEPARATOR = '[\\s._/\\-\\u00ad\\u200b-\\u200d\\u2010-\\u2015\\u2060\\u2212]'
// Groups of three or more digits, then at most two groups of one or two (the last group of a 13-digit
// number written 4-4-4-1; an expiry MM/YY after a number). SEPARATOR is never a digit and each group
// is bounded by non-digits, so the match cannot backtrack into a group: linear in the run.
const DIGIT_RUN = new RegExp(`(?<![\\p{L}\\p{M}\\d])\\d{3,}(?:${SEPARATOR}+\\d{3,})*(?:${SEPARATOR}+\\d{1,2}){0,2}(?![\\p{L}\\p{M}\\d])`, 'gu')
const DIGIT_GROUP = /\d+/g
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

/**
 * The issuers' published number ranges and lengths (prefixes as digit strings; a range holds the
 * numbers whose first digits, as many as its bounds have, lie between the bounds). No card number
 * starts with 0.
 */
const ISSUERS: readonly { network: string; prefixes: readonly (readonly [string, string])[]; lengths: readonly number[] }[] = [
  // Visa: 4, 13, 16 or 19 digits.
  { network: 'Visa', prefixes: [['4', '4']], lengths: [13, 16, 19] },
  // Mastercard: 51-55 and the 2-series 2221-2720, 16 digits.
  { network: 'Mastercard', prefixes: [['51', '55'], ['2221', '2720']], lengths: [16] },
  // American Express: 34 and 37, 15 digits.
  { network: 'American Express', prefixes: [['34', '34'], ['37', '37']], lengths: [15] },
  // Discover: 6011, 644-649, 65 and the UnionPay co-branded 622126-622925, 16-19 digits.
  { network: 'Discover', prefixes: [['6011', '6011'], ['644', '649'], ['65', '65'], ['622126', '622925']], lengths: [16, 17, 18, 19] },
  // JCB: 3528-3589, 16-19 digits.
  { network: 'JCB', prefixes: [['3528', '3589']], lengths: [16, 17, 18, 19] },
  // Diners Club (Carte Blanche and the ranges Discover carries): 300-305, 3095, 38-39, 14-19 digits;
  // Diners Club International's 36 is 14 digits. Keeping 36 at 14 only takes a tenth of a point off the
  // refusals of random 16-digit order numbers, which sit close to the 3% bound (contract section 18).
  { network: 'Diners Club', prefixes: [['300', '305'], ['3095', '3095'], ['38', '39']], lengths: [14, 15, 16, 17, 18, 19] },
  { network: 'Diners Club', prefixes: [['36', '36']], lengths: [14] },
  // UnionPay: 62, and the 8100-8171 range, 16-19 digits.
  { network: 'UnionPay', prefixes: [['62', '62'], ['8100', '8171']], lengths: [16, 17, 18, 19] },
]

/** The network whose range and length the digits fit, Luhn check aside. */
export function cardNetwork(digits: string): string | undefined {
  for (const issuer of ISSUERS) {
    if (!issuer.lengths.includes(digits.length)) continue
    for (const [low, high] of issuer.prefixes) {
      const prefix = digits.slice(0, low.length)
      if (prefix >= low && prefix <= high) return issuer.network
    }
  }
  return undefined
}

/** True when the digits (ASCII, nothing else) are a card number: a known issuer's prefix and length, and Luhn-valid. */
export function isCardNumber(digits: string): boolean {
  return digits.length >= SHORTEST && digits.length <= LONGEST && digits.charCodeAt(0) !== 48 && cardNetwork(digits) !== undefined && isLuhnValid(digits)
}

// What may follow a card number in its run: its CVV (3-4 digits), its expiry (MMYY, or MM and YY as
// two groups), or both (the CVV then the expiry, or the expiry then the CVV).
const CVV = /^\d{3,4}$/
const MONTH = /^(0[1-9]|1[0-2])$/
const MONTH_YEAR = /^(0[1-9]|1[0-2])\d{2}$/
const YEAR = /^\d{2}$/

function isCardTail(tail: readonly string[]): boolean {
  const [a = '', b = '', c = ''] = tail
  switch (tail.length) {
    case 0:
      return true
    case 1:
      return CVV.test(a) || MONTH.test(a)
    case 2:
      return (MONTH.test(a) && YEAR.test(b)) || (CVV.test(a) && MONTH_YEAR.test(b)) || (MONTH_YEAR.test(a) && CVV.test(b))
    case 3:
      return CVV.test(a) && MONTH.test(b) && YEAR.test(c)
    default:
      return false
  }
}

/**
 * True when the run starts with whole groups that are a card number and what follows them is nothing,
 * its CVV, its expiry or both. Only from the run's start: a card number is written on its own, and
 * trying every group as its first refused several in a hundred ordinary grouped numbers (a 22-digit
 * tracking number printed in fours, 3.5%). Walks right while the number is at most 19 digits.
 */
function runHoldsCardNumber(run: string): boolean {
  const groups = run.match(DIGIT_GROUP) ?? []
  let digits = ''
  for (let last = 0; last < groups.length; last++) {
    digits += groups[last]!
    if (digits.length > LONGEST) return false
    if (digits.length >= SHORTEST && isCardNumber(digits) && isCardTail(groups.slice(last + 1))) return true
  }
  return false
}

/** True when the text holds something that looks like a primary account number (the request guard's rule). */
export function containsCardNumber(text: string): boolean {
  if (!mayHoldCardNumber(text)) return false
  for (const match of normalised(text).matchAll(DIGIT_RUN)) {
    if (runHoldsCardNumber(match[0])) return true
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
 * Replaces card-number-like runs in free text (log lines, URLs) with a mask, by the broad rule: any
 * digits with only separators between them, touching letters or not, in groups of any size, any
 * 13-19 digit window of which (not starting with 0) passes the Luhn check. So every run
 * containsCardNumber finds is masked, and also many it lets pass (ids that merely hold a Luhn-valid
 * window, runs touching letters, cards glued to other digits). Text without one comes back
 * unchanged; text with one comes back NFKC-normalised with each such run masked.
 */
export function maskCardNumbers(text: string): string {
  if (!mayHoldCardNumber(text)) return text
  let masked = false
  const result = normalised(text).replace(ANY_DIGIT_RUN, (run) => {
    if (!holdsLuhnWindow(run.replace(NOT_A_DIGIT, ''))) return run
    masked = true
    return CARD_NUMBER_MASK
  })
  return masked ? result : text
}
