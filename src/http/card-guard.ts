import type { FastifyInstance } from 'fastify'
import { findCardNumber } from '../lib/card-data.ts'
import { AppError } from '../lib/errors.ts'

/**
 * No field of this API accepts a primary account number. Anything that looks like one is refused
 * before validation or storage, and the error names only where it was, never the value.
 */
export function registerCardDataGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const where =
      prefixed('/body', findCardNumber(request.body)) ??
      prefixed('/query', findCardNumber(request.query)) ??
      prefixed('/path', findCardNumber(request.params))
    if (where) {
      throw new AppError(
        'card_data_rejected',
        'card numbers are never accepted: send the commerce platform vault instrument id instead',
        { errors: [{ path: where, message: 'looks like a card number' }] },
      )
    }
  })
}

function prefixed(part: string, pointer: string | undefined): string | undefined {
  if (pointer === undefined) return undefined
  return pointer === '/' ? part : `${part}${pointer}`
}
