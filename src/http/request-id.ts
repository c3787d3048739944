import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const ACCEPTABLE = /^[A-Za-z0-9._-]{1,128}$/

// 80 random bits per process keep ids from different processes apart; a counter numbers this
// process's requests (48 bits: centuries at any real rate). Same shape as before: req_ + 32 hex.
const PREFIX = `req_${randomBytes(10).toString('hex')}`
let counter = 0

/** Echoes a caller's request id when it is safe to log and return, otherwise makes one. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id']
  if (typeof incoming === 'string' && ACCEPTABLE.test(incoming)) return incoming
  counter = (counter + 1) % 0x1000000000000
  return PREFIX + counter.toString(16).padStart(12, '0')
}
