import { sql, type Kysely } from 'kysely'

/**
 * Webhook health and the delivery inspector (issue 26):
 *   - each attempt keeps the real time it was sent (its `webhook-timestamp`; `attempted_at` may be on a
 *     test store's clock) and the `webhook-signature` it carried, so its request is shown as it was
 *     sent; a first attempt that succeeded keeps them on its delivery row, like its latency and answer;
 *   - the answers kept before are cut to 1,024 bytes: escaping an answer's bytes (NUL as `\u0000`) could
 *     make its first KiB longer than that, which the dispatcher now prevents;
 *   - deliveries by endpoint and last change: every attempt updates its delivery, so the deliveries
 *     changed in the last 24 hours hold every attempt of them (the endpoint's health).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_attempts').addColumn('sent_at', 'timestamptz').execute()
  await db.schema.alterTable('webhook_attempts').addColumn('request_signature', 'text').execute()
  await db.schema.alterTable('webhook_deliveries').addColumn('delivered_sent_at', 'timestamptz').execute()
  await db.schema.alterTable('webhook_deliveries').addColumn('delivered_request_signature', 'text').execute()
  for (const [table, column] of [['webhook_attempts', 'response_body'], ['webhook_deliveries', 'delivered_response_body']] as const) {
    // The longest prefix of whole characters within 1,024 bytes (a character takes at most 4).
    await sql`
      UPDATE ${sql.table(table)} SET ${sql.ref(column)} = (
        SELECT left(${sql.ref(column)}, n) FROM generate_series(1024, 256, -1) AS n WHERE octet_length(left(${sql.ref(column)}, n)) <= 1024 LIMIT 1)
       WHERE octet_length(${sql.ref(column)}) > 1024`.execute(db)
  }
  await db.schema.createIndex('webhook_deliveries_endpoint_updated_idx').on('webhook_deliveries').columns(['webhook_subscription_id', 'updated_at']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_endpoint_updated_idx').execute()
  await db.schema.alterTable('webhook_deliveries').dropColumn('delivered_request_signature').execute()
  await db.schema.alterTable('webhook_deliveries').dropColumn('delivered_sent_at').execute()
  await db.schema.alterTable('webhook_attempts').dropColumn('request_signature').execute()
  await db.schema.alterTable('webhook_attempts').dropColumn('sent_at').execute()
}
