import { AppError } from '../../lib/errors.ts'
import { MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'

/**
 * Refuses a write that would make one renewal (price x quantity, before discounts) exceed
 * MAX_RENEWAL_AMOUNT: 400 `amount_too_large` at `path`, the JSON pointer of the field that made it so.
 * Call it inside the transaction that writes, once the rows it reads are locked.
 */
export function assertRenewalAmount(amount: number, quantity: number, path: string): void {
  const total = amount * quantity
  if (total <= MAX_RENEWAL_AMOUNT) return
  const message = `makes one renewal ${total} minor units (${amount} x ${quantity}); the limit is ${MAX_RENEWAL_AMOUNT}`
  throw new AppError('amount_too_large', `${path} ${message}`, { errors: [{ path, message }] })
}
