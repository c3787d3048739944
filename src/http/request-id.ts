import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const ACCEPTABLE = /^[A-Za-z0-9._-]{1,128}$/

// 80 random bits per process keep ids from different processes apart; a counter numbers this
// process's requests (48 bits: centuries at any real rate). Written with the letters a-p instead
// of hex digits: a zero-padded counter in hex made long digit runs, and one in ten of those passes
// the Luhn check, so card-number scanners (ours, and log DLP) took request ids for card numbers.
const NIBBLE_LETTERS = 'abcdefghijklmnop'
const asLetters = (hex: string) => hex.replace(/[0-9a-f]/g, (digit) => NIBBLE_LETTERS[Number.parseInt(digit, 16)]!)
const PREFIX = `req_${asLetters(randomBytes(10).toString('hex'))}`
let counter = 0

/** Echoes a caller's request id when it is safe to log and return, otherwise makes one. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id']
  if (typeof incoming === 'string' && ACCEPTABLE.test(incoming)) return incoming
  counter = (counter + 1) % 0x1000000000000
  return PREFIX + asLetters(counter.toString(16).padStart(12, '0'))
}
