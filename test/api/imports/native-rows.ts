import { Readable } from 'node:stream'
import { NATIVE_COLUMNS } from '../../../src/modules/subscriptions/index.ts'

/**
 * A `native` file of `count` active monthly subscriptions on `planId`, generated as it is read (never
 * whole in memory): each row its own subscriber and external id, renewing `nextChargeAt` plus a minute
 * per row. What a merchant moving stores, or an import bench, sends.
 */
export function nativeRows({ count, planId, nextChargeAt, prefix = 'ext' }: { count: number; planId: string; nextChargeAt: Date; prefix?: string }): Readable {
  const line = (cells: Record<string, string>) => `${NATIVE_COLUMNS.map((column) => cells[column] ?? '').join(',')}\n`
  async function* lines() {
    yield `${NATIVE_COLUMNS.join(',')}\n`
    let chunk = ''
    for (let i = 0; i < count; i++) {
      chunk += line({
        external_id: `${prefix}-${i}`,
        status: 'active',
        email: `${prefix}-${i}@example.com`,
        name: `Subscriber ${i}`,
        plan_id: planId,
        quantity: '1',
        amount: String(1000 + (i % 500)),
        currency: 'USD',
        interval: 'month',
        interval_count: '1',
        next_charge_at: new Date(nextChargeAt.getTime() + i * 60_000).toISOString(),
        payment_instrument_id: `tok_${i}`,
      })
      if (chunk.length > 64 * 1024) {
        yield chunk
        chunk = ''
      }
    }
    if (chunk) yield chunk
  }
  return Readable.from(lines(), { objectMode: false })
}
