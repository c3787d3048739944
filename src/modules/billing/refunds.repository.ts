import type { Executor, RefundRow } from '../../db/database.ts'

/** The refunds of these charges, oldest first (each charge's refund rows, for its `refunds` list). */
export async function refundsOfCharges(db: Executor, chargeIds: readonly string[]): Promise<Map<string, RefundRow[]>> {
  const byCharge = new Map<string, RefundRow[]>()
  if (chargeIds.length === 0) return byCharge
  const rows = await db.selectFrom('refunds').selectAll().where('charge_id', 'in', [...new Set(chargeIds)]).orderBy('created_at').orderBy('id').execute()
  for (const row of rows) {
    const list = byCharge.get(row.charge_id) ?? []
    list.push(row)
    byCharge.set(row.charge_id, list)
  }
  return byCharge
}
