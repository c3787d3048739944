import type { FastifyInstance } from 'fastify'
import { findCardNumber } from '../lib/card-data.ts'
import { AppError } from '../lib/errors.ts'

const SHORTEST_CARD_NUMBER = 13

/**
 * No field of this API accepts a primary account number. Anything that looks like one is refused
 * before validation or storage, and the error names only where it was, never the value.
 */
export function registerCardDataGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    // Query and path values are decoded from the URL: without a body and without 13 digits in the
    // URL there is nothing to find (a percent-encoded digit, %3N, is still a digit in the URL).
    if (request.body === undefined && !holdsEnoughDigits(request.url)) return done()
    const where =
      prefixed('/body', findCardNumber(request.body)) ??
      prefixed('/query', findCardNumber(request.query)) ??
      prefixed('/path', findCardNumber(request.params))
    if (!where) return done()
    done(
      new AppError(
        'card_data_rejected',
        'card numbers are never accepted: send the commerce platform vault instrument id instead',
        { errors: [{ path: where, message: 'looks like a card number' }] },
      ),
    )
  })
}

/** True when the text has at least as many ASCII digits as the shortest card number. */
export function holdsEnoughDigits(text: string): boolean {
  if (text.length < SHORTEST_CARD_NUMBER) return false
  let digits = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 48 && code <= 57 && ++digits >= SHORTEST_CARD_NUMBER) return true
  }
  return false
}

function prefixed(part: string, pointer: string | undefined): string | undefined {
  if (pointer === undefined) return undefined
  return pointer === '/' ? part : `${part}${pointer}`
}
