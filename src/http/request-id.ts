import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { containsCardNumber } from '../lib/card-data.ts'

const ACCEPTABLE = /^[A-Za-z0-9._-]{1,128}$/

// 80 random bits per process keep ids from different processes apart; a counter numbers this
// process's requests (48 bits: centuries at any real rate). Written with the letters a-p instead
// of hex digits: a zero-padded counter in hex made long digit runs, and one in ten of those passes
// the Luhn check, so card-number scanners (ours, and log DLP) took request ids for card numbers.
const NIBBLE_LETTERS = 'abcdefghijklmnop'
// Two letters per byte, looked up: this runs on every request.
const BYTE_LETTERS = Array.from({ length: 256 }, (_, byte) => NIBBLE_LETTERS[byte >> 4]! + NIBBLE_LETTERS[byte & 15]!)
const lettersOf = (bytes: Iterable<number>) => Array.from(bytes, (byte) => BYTE_LETTERS[byte]).join('')
const PREFIX = `req_${lettersOf(randomBytes(10))}`
let counter = 0

/** The 48-bit counter as 12 letters, most significant first. */
function counterLetters(value: number): string {
  let letters = ''
  for (let shift = 40; shift >= 0; shift -= 8) letters += BYTE_LETTERS[Math.floor(value / 2 ** shift) & 255]
  return letters
}

/**
 * Echoes a caller's request id when it is safe to log and return, otherwise makes one. One that
 * holds a card number is never adopted (the card guard then refuses the request).
 */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id']
  if (typeof incoming === 'string' && ACCEPTABLE.test(incoming) && !containsCardNumber(incoming)) return incoming
  counter = (counter + 1) % 0x1000000000000
  return PREFIX + counterLetters(counter)
}
