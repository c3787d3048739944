import { sql, type Kysely } from 'kysely'

/**
 * What needs a person now (docs/contract.md, Payment recovery: `GET /api/v1/admin/attention`), read
 * from the subscriptions' current state rather than from every failed charge ever made: a store's
 * subscriptions in dunning, past due or with a billing issue, and its charges under review. Both are
 * few beside everything else, so each gets a partial index by store.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX subscriptions_attention_idx ON subscriptions (store_id)
            WHERE dunning_attempts > 0 OR status = 'past_due' OR billing_issue IS NOT NULL`.execute(db)
  await sql`CREATE INDEX charges_requires_review_idx ON charges (store_id) WHERE status = 'requires_review'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS charges_requires_review_idx`.execute(db)
  await sql`DROP INDEX IF EXISTS subscriptions_attention_idx`.execute(db)
}
