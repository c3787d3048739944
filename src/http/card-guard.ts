import type { FastifyInstance } from 'fastify'
import { containsCardNumber, locateCardNumber, MOST_DIGITS_PER_CHARACTER, type CardNumberLocation } from '../lib/card-data.ts'
import { AppError } from '../lib/errors.ts'

const SHORTEST_CARD_NUMBER = 13

/** Request headers this service echoes, logs or stores, and so holds to the same rule as fields. */
export const GUARDED_HEADERS = ['x-request-id', 'idempotency-key'] as const

const refusal = (path: string, message = 'looks like a card number') =>
  new AppError('card_data_rejected', 'card numbers are never accepted: send the commerce platform vault instrument id instead', {
    errors: [{ path, message }],
  })

/**
 * No field of this API accepts a primary account number. Anything that looks like one is refused
 * before validation or storage, and the error names only where it was, never the value.
 */
export function registerCardDataGuard(app: FastifyInstance): void {
  // Headers first, on every route (unknown ones included): X-Request-Id is echoed and logged,
  // Idempotency-Key stored. A refused X-Request-Id was never adopted as the request id (request-id.ts).
  app.addHook('onRequest', (request, _reply, done) => {
    for (const name of GUARDED_HEADERS) {
      const value = request.headers[name]
      if (typeof value === 'string' && containsCardNumber(value)) return done(refusal(`/header/${name}`))
    }
    done()
  })

  app.addHook('preValidation', (request, _reply, done) => {
    // Query and path values are decoded from the URL: without a body and without enough digits in
    // the URL there is nothing to find (see holdsEnoughDigits).
    if (request.body === undefined && !holdsEnoughDigits(request.url)) return done()
    const found =
      prefixed('/body', locateCardNumber(request.body)) ??
      prefixed('/query', locateCardNumber(request.query)) ??
      prefixed('/path', locateCardNumber(request.params))
    done(found ? refusal(found.path, found.inKey ? 'has a key that looks like a card number' : undefined) : undefined)
  })
}

/**
 * False when the URL cannot hold a card number in any query or path value: fewer than 13 digits
 * once percent-decoded and NFKC-normalised. Counts each ASCII digit, each `%` (an encoded byte:
 * NFKC makes at most as many digits of a character as it has UTF-8 bytes) and each raw character
 * outside ASCII as the most digits NFKC can make of one. Runs on every request without a body.
 */
export function holdsEnoughDigits(url: string): boolean {
  if (url.length * MOST_DIGITS_PER_CHARACTER < SHORTEST_CARD_NUMBER) return false
  let digits = 0
  for (let i = 0; i < url.length; i++) {
    const code = url.charCodeAt(i)
    if ((code >= 48 && code <= 57) || code === 37) digits += 1
    else if (code > 127) digits += MOST_DIGITS_PER_CHARACTER
    else continue
    if (digits >= SHORTEST_CARD_NUMBER) return true
  }
  return false
}

function prefixed(part: string, found: CardNumberLocation | undefined): CardNumberLocation | undefined {
  if (found === undefined) return undefined
  return { ...found, path: found.path === '/' ? part : `${part}${found.path}` }
}
