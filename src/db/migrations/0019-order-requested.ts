import type { Kysely } from 'kysely'

/**
 * When a renewal's platform order was asked for, recorded while the charge's lease held, just before
 * the request left. The platform takes no idempotency key on orders: a worker that takes a charge over
 * while the first worker's order request is still in flight would not find that order yet and raise a
 * second one. With the mark, it waits until the first request can no longer be in flight, then looks
 * again (src/modules/billing/gateways/platform-gateway.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('charges').addColumn('order_requested_at', 'timestamptz').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('charges').dropColumn('order_requested_at').execute()
}
