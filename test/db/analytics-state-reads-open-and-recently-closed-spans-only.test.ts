import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { sql, type Kysely } from 'kysely'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import * as scaleIndexes from '../../src/db/migrations/0036-scale-indexes.ts'
import { metricWindows, subscriptionMetrics, type MetricWindow } from '../../src/modules/subscriptions/index.ts'
import { createTestDatabase } from '../helpers/database.ts'

/**
 * Migration 0036 (issue 28): the analytics "state at a moment" reads the open spans and the spans closed
 * since the window's start instead of the store's whole history, and the search's trigram indexes are led
 * by the store. The figures must be exactly those of the statement it replaced, on any history.
 */
const STORE = 'store_a'
const OTHER = 'store_b'
const DAY = 86_400_000
const T0 = Date.UTC(2026, 0, 1)

// The statement before 0036: one range over the store's history, kept here as the reference.
async function referenceState(db: DatabaseHandle['db'], storeId: string, windows: MetricWindow[]) {
  const { rows } = await sql<{ i: string; currency: string; interval_count: number; yearly: string | null; at_end: number; at_start: number }>`
    SELECT w.i, h.currency, h.interval_count * h.cycles AS interval_count,
      sum((h.amount * h.quantity - CASE h.discount_type
          WHEN 'percentage' THEN (h.amount * h.quantity * h.discount_value + 50) / 100
          WHEN 'fixed_amount' THEN least(h.discount_value, h.amount * h.quantity)
          ELSE 0 END) * (CASE h.interval WHEN 'day' THEN 365 WHEN 'week' THEN 52 WHEN 'month' THEN 12 ELSE 1 END))
        FILTER (WHERE h.valid_to IS NULL OR h.valid_to >= w.end_at)::text AS yearly,
      count(*) FILTER (WHERE h.valid_to IS NULL OR h.valid_to >= w.end_at)::int AS at_end,
      count(*) FILTER (WHERE h.valid_from < w.start_at)::int AS at_start
    FROM ${metricWindows(windows)}
    JOIN subscription_history h ON h.store_id = ${storeId} AND h.valid_from < w.end_at AND (h.valid_to IS NULL OR h.valid_to >= w.start_at)
    WHERE h.status IN ('active', 'past_due')
    GROUP BY w.i, h.currency, h.interval_count * h.cycles`.execute(db)
  const out = new Map<string, { activeAtEnd: number; activeAtStart: number; mrrYearly: string[] }>()
  for (const row of rows) {
    const key = `${row.i}:${row.currency}`
    const entry = out.get(key) ?? { activeAtEnd: 0, activeAtStart: 0, mrrYearly: [] }
    entry.activeAtEnd += Number(row.at_end)
    entry.activeAtStart += Number(row.at_start)
    if (row.yearly !== null) entry.mrrYearly.push(`${row.interval_count}:${row.yearly}`)
    out.set(key, entry)
  }
  return out
}

const span = fc.record({
  other: fc.boolean(),
  status: fc.constantFrom('active', 'past_due', 'paused', 'cancelled', 'expired'),
  amount: fc.integer({ min: 0, max: 100_000 }),
  quantity: fc.integer({ min: 1, max: 5 }),
  interval: fc.constantFrom('day', 'week', 'month', 'year'),
  intervalCount: fc.integer({ min: 1, max: 3 }),
  cycles: fc.integer({ min: 1, max: 3 }),
  currency: fc.constantFrom('USD', 'EUR'),
  discount: fc.oneof(fc.constant(null), fc.record({ type: fc.constantFrom('percentage', 'fixed_amount'), value: fc.integer({ min: 0, max: 100 }) })),
  fromDay: fc.integer({ min: 0, max: 60 }),
  // null: still open; else how many days (0 allowed) it lasted.
  lastedDays: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
})
const window = fc.tuple(fc.integer({ min: 0, max: 80 }), fc.integer({ min: 1, max: 40 })).map(([from, length]) => ({ from: new Date(T0 + from * DAY), to: new Date(T0 + (from + length) * DAY) }))

describe('analytics state at a moment: open spans plus spans closed since the window began (migration 0036)', () => {
  let handle: DatabaseHandle
  before(async () => {
    handle = await createTestDatabase()
  })
  after(() => handle.close())

  test('MRR, active at the end and active at the start equal the whole-history statement on any history and windows', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(span, { maxLength: 25 }), fc.array(window, { minLength: 1, maxLength: 3 }), async (spans, windows) => {
        const { db } = handle
        await sql`DELETE FROM subscription_history`.execute(db)
        if (spans.length > 0) {
          // The table is the trigger's (migration 0013): not in the service's database type.
          await (db as unknown as Kysely<any>)
            .insertInto('subscription_history')
            .values(
              spans.map((s, n) => ({
                subscription_id: `sub_${n}`,
                store_id: s.other ? OTHER : STORE,
                status: s.status,
                amount: s.amount,
                quantity: s.quantity,
                interval: s.interval,
                interval_count: s.intervalCount,
                cycles: s.cycles,
                currency: s.currency,
                discount_type: s.discount?.type ?? null,
                discount_value: s.discount?.value ?? null,
                valid_from: new Date(T0 + s.fromDay * DAY),
                valid_to: s.lastedDays === null ? null : new Date(T0 + (s.fromDay + s.lastedDays) * DAY),
              })),
            )
            .execute()
        }
        const expected = await referenceState(db, STORE, windows)
        const actual = await subscriptionMetrics(db, STORE, windows)
        for (const figure of actual) {
          const reference = expected.get(`${figure.window}:${figure.currency}`) ?? { activeAtEnd: 0, activeAtStart: 0, mrrYearly: [] }
          expected.delete(`${figure.window}:${figure.currency}`)
          assert.deepEqual(
            { activeAtEnd: figure.activeAtEnd, activeAtStart: figure.activeAtStart, mrrYearly: figure.mrrYearly.map((p) => `${p.intervalCount}:${p.sum}`).sort() },
            { ...reference, mrrYearly: [...reference.mrrYearly].sort() },
          )
        }
        assert.deepEqual([...expected.keys()], [], 'no window and currency the reference has and the new statement lacks')
      }),
      { numRuns: 40 },
    )
  })

  test('down restores the store-less search indexes and drops the history ones; up makes them again', async () => {
    const { db } = handle
    const shape = async () => {
      const { rows } = await sql<{ name: string; def: string }>`
        SELECT indexname AS name, indexdef AS def FROM pg_indexes
        WHERE schemaname = current_schema() AND indexname IN ('subscribers_email_trgm_idx', 'subscribers_name_trgm_idx', 'subscription_history_open_active_idx', 'subscription_history_closed_active_idx')
        ORDER BY indexname`.execute(db)
      return rows.map((row) => `${row.name}: ${row.def.replace(/^.* USING /, '')}`)
    }
    const migrated = await shape()
    assert.deepEqual(
      migrated.map((line) => line.replace(/ WHERE .*$/, '')),
      [
        'subscribers_email_trgm_idx: gin (store_id, email gin_trgm_ops)',
        'subscribers_name_trgm_idx: gin (store_id, name gin_trgm_ops)',
        'subscription_history_closed_active_idx: btree (store_id, valid_to) INCLUDE (valid_from, currency, interval_count, cycles, amount, quantity, "interval", discount_type, discount_value)',
        'subscription_history_open_active_idx: btree (store_id, valid_from) INCLUDE (currency, interval_count, cycles, amount, quantity, "interval", discount_type, discount_value)',
      ],
    )
    await scaleIndexes.down(db as never)
    assert.deepEqual(await shape(), ['subscribers_email_trgm_idx: gin (email gin_trgm_ops)', 'subscribers_name_trgm_idx: gin (name gin_trgm_ops)'])
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM subscribers WHERE store_id = ${STORE} AND email ILIKE ${'%ada@%'}`.execute(db)
    assert.equal(rows[0]!.n, 0, 'a search runs on either side')
    await scaleIndexes.up(db as never)
    assert.deepEqual(await shape(), migrated)
  })
})
