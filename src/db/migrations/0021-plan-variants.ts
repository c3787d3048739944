import type { Kysely } from 'kysely'

/**
 * A plan may name the catalog variant it sells (a size, a grind): a checkout item that names none
 * takes the plan's, and a swap onto the plan moves the subscription to it. Subscriptions already keep
 * their own `platform_variant_id` (migration 0009).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('plans').addColumn('platform_variant_id', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('plans').dropColumn('platform_variant_id').execute()
}
