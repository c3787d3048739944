import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { cardNetwork, containsCardNumber, holdsLuhnWindow, isLuhnValid } from '../../src/lib/card-data.ts'
import { TEST_CARDS } from '../helpers/test-cards.ts'

// The card guard's bound (docs/contract.md, Card data; issue 25): on 10,000 random identifiers of each
// realistic shape at most 3% of the shape is refused, while every test card number, however written,
// still is. The identifiers come from a seeded PRNG, so every run measures the same sample.

const SAMPLES = 10_000
const MOST_REFUSED = 0.03
// Issue 25. The sample is fixed by it; a different seed moves each rate by its sampling error (about
// 0.17 points at 3% on 10,000 samples).
const SEED = 25

/** mulberry32: a tiny seeded PRNG, uniform on [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Random = () => number
const below = (random: Random, n: number) => Math.floor(random() * n)
const digits = (random: Random, count: number) => Array.from({ length: count }, () => String(below(random, 10))).join('')
/** A number of `count` digits whose first is 1-9 (the worst case: no card number starts with 0). */
const number = (random: Random, count: number) => String(1 + below(random, 9)) + digits(random, count - 1)
const hex = (random: Random, count: number) => Array.from({ length: count }, () => below(random, 16).toString(16)).join('')

/**
 * A phone number of `count` digits written internationally with spaces, `+44 20 7946 0958`-like: a
 * country code of 1-3 digits, then groups of 2-4 digits.
 */
function spacedPhone(random: Random, count: number): string {
  const all = number(random, count)
  const country = 1 + below(random, 3)
  const groups = [all.slice(0, country)]
  let at = country
  while (count - at > 4) {
    // Never leaves a last group of one digit.
    const size = Math.min(2 + below(random, 3), count - at - 2)
    groups.push(all.slice(at, at + size))
    at += size
  }
  groups.push(all.slice(at))
  return `+${groups.join(' ')}`
}

/** A version 4 UUID, lower case, from the PRNG. */
function uuid(random: Random): string {
  const h = hex(random, 32).split('')
  h[12] = '4'
  h[16] = (8 + below(random, 4)).toString(16)
  const s = h.join('')
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`
}

/**
 * The shapes the contract names (section 18), each a generator of one identifier; for an unbroken
 * number of `digits` digits (first 1-9), what any rule that refuses every card number must refuse of it.
 */
const SHAPES: readonly (readonly [string, (random: Random) => string, digits?: number])[] = [
  ['16-digit order number', (random) => number(random, 16), 16],
  ['15-digit tracking number', (random) => number(random, 15), 15],
  ['22-digit tracking number', (random) => number(random, 22), 22],
  // As USPS prints them: groups of four (9361 5597 7439 7197 5597 17).
  ['22-digit tracking number, in fours', (random) => number(random, 22).replace(/(\d{4})(?=\d)/g, '$1 ')],
  ['13-digit phone number', (random) => `+${number(random, 13)}`, 13],
  ['14-digit phone number', (random) => `+${number(random, 14)}`, 14],
  ['15-digit phone number', (random) => `+${number(random, 15)}`, 15],
  ['13-digit phone number, spaced', (random) => spacedPhone(random, 13)],
  ['14-digit phone number, spaced', (random) => spacedPhone(random, 14)],
  ['15-digit phone number, spaced', (random) => spacedPhone(random, 15)],
  ['UUID v4', uuid],
  ['64-hex token', (random) => hex(random, 64)],
]

/**
 * The share of unbroken numbers of this many digits (first 1-9) that are card numbers: those with a
 * known issuer's prefix for that length (no network's prefix is longer than 6 digits), one in ten of
 * which passes the Luhn check. A refusal rate no rule that catches every card number can go below.
 */
const shares = new Map<number, number>()
function cardShare(length: number): number {
  if (length > 19) return 0
  const known = shares.get(length)
  if (known !== undefined) return known
  const zeros = '0'.repeat(length - 6)
  let prefixed = 0
  for (let prefix = 100_000; prefix < 1_000_000; prefix++) if (cardNetwork(`${prefix}${zeros}`) !== undefined) prefixed += 1
  const share = prefixed / 900_000 / 10
  shares.set(length, share)
  return share
}

// The rule before issue 25, for the before/after diagnostic only: the run tokenisation it had, and a run
// refused when any 13-19 digit window of it (not starting with 0) passed the Luhn check.
const SEPARATOR = '[\\s._/\\-\\u00ad\\u200b-\\u200d\\u2010-\\u2015\\u2060\\u2212]'
const OLD_DIGIT_RUN = new RegExp(`(?<![\\p{L}\\p{M}\\d])\\d{3,}(?:${SEPARATOR}+\\d{3,})*(?:${SEPARATOR}+\\d{1,2})?(?![\\p{L}\\p{M}\\d])`, 'gu')
function oldRuleRefuses(text: string): boolean {
  for (const match of text.normalize('NFKC').matchAll(OLD_DIGIT_RUN)) {
    if (holdsLuhnWindow(match[0].replace(/\D/g, ''))) return true
  }
  return false
}


/** Converts ASCII digits and spaces to their full-width forms, as some keyboards type them. */
const fullWidth = (text: string) => text.replace(/\d/g, (digit) => String.fromCharCode(0xff10 + Number(digit))).replace(/ /g, '\u3000')
/** Groups of 4 (American Express 4-6-5). */
const grouped = (pan: string, separator: string) =>
  pan.length === 15 && pan.startsWith('3') && (pan[1] === '4' || pan[1] === '7')
    ? `${pan.slice(0, 4)}${separator}${pan.slice(4, 10)}${separator}${pan.slice(10)}`
    : pan.replace(/(\d{4})(?=\d)/g, `$1${separator}`)

/** Every way of writing a test card number the contract names. */
function writtenForms(pan: string): [string, string][] {
  const spaced = grouped(pan, ' ')
  const forms: [string, string][] = [
    ['alone', pan],
    ['spaced', spaced],
    ['dashed', grouped(pan, '-')],
    ['full-width', fullWidth(pan)],
    ['full-width, spaced', fullWidth(spaced)],
    ['followed by a 3-digit CVV', `${spaced} 123`],
    ['followed by a 4-digit CVV', `${spaced} 1234`],
    ['ungrouped, followed by a CVV', `${pan} 123`],
    ['followed by an expiry MM/YY', `${spaced} 12/27`],
    ['followed by an expiry MMYY', `${spaced} 1227`],
    ['followed by an expiry MM-YY', `${spaced} 12-27`],
    ['dashed, followed by a CVV', `${grouped(pan, '-')}-123`],
  ]
  return [...forms, ...forms.map(([how, text]): [string, string] => [`${how}, inside a sentence`, `Please charge my card ${text} for the order, thanks.`])]
}

describe('the card guard refuses few ordinary identifiers and every test card number (contract section 18)', () => {
  test('the test card numbers are Luhn-valid', () => {
    for (const [network, pan] of TEST_CARDS) assert.ok(isLuhnValid(pan), `${network} ${pan}`)
  })

  test(`at most ${MOST_REFUSED * 100}% of ${SAMPLES} random identifiers of each shape is refused`, (t) => {
    const random = mulberry32(SEED)
    const over: string[] = []
    for (const [shape, make, length] of SHAPES) {
      let refused = 0
      let refusedBefore = 0
      let example: string | undefined
      for (let i = 0; i < SAMPLES; i++) {
        const id = make(random)
        if (containsCardNumber(id)) {
          refused += 1
          example ??= id
        }
        if (oldRuleRefuses(id)) refusedBefore += 1
      }
      const rate = refused / SAMPLES
      const percent = (share: number) => `${(share * 100).toFixed(2)}%`
      const floor = length === undefined ? '' : `, card numbers are ${percent(cardShare(length))} of such numbers`
      t.diagnostic(`${shape}: ${percent(rate)} refused (the rule before issue 25: ${percent(refusedBefore / SAMPLES)}${floor})${example ? `, e.g. ${example}` : ''}`)
      if (rate > MOST_REFUSED) over.push(`${shape}: ${percent(rate)}`)
    }
    assert.deepEqual(over, [], `refused more than ${MOST_REFUSED * 100}%`)
  })

  test('every test card number is refused, however it is written', () => {
    const missed: string[] = []
    for (const [network, pan] of TEST_CARDS) {
      for (const [how, text] of writtenForms(pan)) if (!containsCardNumber(text)) missed.push(`${network} ${how}: ${JSON.stringify(text)}`)
    }
    assert.deepEqual(missed, [])
  })
})
