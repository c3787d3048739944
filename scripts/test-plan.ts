/**
 * What the test runner (scripts/test.ts) runs and in what order: the tiers, the longest files, the
 * PostgreSQL pass and the tiers that share a process. Kept apart from the runner so the suite-rules test
 * can check these lists without importing the runner, whose top-level await would deadlock a test that
 * imports it from inside the runner's own process (the shared lane).
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Tiers, in the order their files start: the ones that wait on processes and browsers first. */
export const TIERS = ['test/process', 'test/browser', 'test/db', 'test/contract', 'test/api', 'test/unit']

/**
 * The longest files, longest first (from the per-file times this script prints at the end of a run),
 * so that no long file starts near the end: the rest are much shorter and fill in around them.
 */
export const LONGEST_FIRST = [
  'test/process/billing-exactly-once.test.ts',
  'test/process/cli.test.ts',
  'test/browser/console.test.ts',
  'test/process/webhooks-crash.test.ts',
  'test/browser/portal.test.ts',
  'test/api/portal/sign-in.test.ts',
  'test/process/server-process.test.ts',
  'test/process/graceful-shutdown.test.ts',
  'test/process/startup-safety.test.ts',
  'test/process/platform-crash.test.ts',
  'test/browser/portal-manage.test.ts',
  'test/browser/docs.test.ts',
  'test/api/portal/access-control.test.ts',
  'test/browser/portal-stored-cards.test.ts',
  'test/browser/widget.test.ts',
  'test/db/subscription-invariants.test.ts',
  'test/api/subscriptions/order-now.test.ts',
]

/**
 * The PostgreSQL pass (`npm run test:db`, which .ci/run runs with DATABASE_URL): what differs between the
 * engines, not everything twice. PGlite is PostgreSQL itself, so SQL that passes there passes here; what
 * can differ is concurrency (one connection there, a pool of them and several processes here), connection
 * loss, and the scratch-database plumbing.
 */
export const POSTGRES = [
  // Transactions, locks, SKIP LOCKED races between pools, the outbox, the auth cache across processes.
  'test/db',
  // Exactly-once under SIGKILL (12 kills, and two worker processes at once), webhooks at least once,
  // a platform slower than the lease with workers killed mid-payment, several processes on one database,
  // and a graceful stop that closes a connection pool (not one embedded connection) after its last request.
  'test/process/billing-exactly-once.test.ts',
  'test/process/webhooks-crash.test.ts',
  'test/process/slow-gateway.test.ts',
  'test/process/server-process.test.ts',
  'test/process/graceful-shutdown.test.ts',
  // The database itself restarting (fast, then immediate) under an API and two workers mid-billing: 503
  // while it is down, then billing and deliveries resume by themselves (a throwaway cluster of its own).
  'test/process/postgres-restart.test.ts',
  // A representative API slice over the SQL paths: subscription actions and checkout (row locks, batched
  // first pages, pool connections dropped by the server), renewals and dunning, refunds, renewal pricing, webhook delivery
  // and fan-out, portal access control and the auth cache, idempotency keys, the event log.
  'test/api/subscriptions/actions.test.ts',
  'test/api/subscriptions/checkout.test.ts',
  'test/api/subscriptions/connection-loss.test.ts',
  'test/api/subscriptions/concurrent-lists.test.ts',
  'test/api/subscriptions/odd-ids-in-lists.test.ts',
  'test/api/billing/renewals.test.ts',
  'test/api/billing/refunds.test.ts',
  // Refund status none -> partial -> full and each refund's reason (CONTRACT 17).
  'test/api/billing/refund-status.test.ts',
  // Renewals priced by the store: the breakdown's CHECK and its trigger, the settings' constraints, the
  // renewal through the platform's checkout (with workers killed after the cart, the order and mid-payment),
  // variants.
  'test/api/billing/renewal-pricing.test.ts',
  'test/api/billing/platform-renewals.test.ts',
  'test/api/billing/renewal-out-of-stock.test.ts',
  // Payment recovery: retry now through the engine (concurrent and replayed), the update-card link, the attention list's SQL.
  'test/api/billing/payment-recovery.test.ts',
  // A charge claimed before billing was switched off is never sent while it is off (the reconciler's take-over).
  'test/api/billing/a-charge-claimed-before-billing-off-is-never-sent.test.ts',
  // The cutover switch: billing off holds every claim, retry and reminder across weeks; on, each once, oldest first.
  'test/api/billing/billing-off-charges-nothing-then-each-once.test.ts',
  // Coming back on: no reminder for a renewal already due (the reminder query's catch-up bound); who switched it (store.updated under the store's row lock).
  'test/api/billing/billing-on-announces-no-overdue-renewal.test.ts',
  // Many stores: a 429-only store and a silent one never hold back a third; one store budget spent by two claimers at once.
  'test/api/billing/one-store-never-holds-back-another.test.ts',
  'test/api/stores/settings-change-records-who-and-what.test.ts',
  // Imports: a Recharge file matched to the platform's customers and cards, then renewed each once after the
  // cutover; an export imported again as the same subscriptions; 100,000 rows from the CLI in bounded memory.
  'test/api/imports',
  // Bulk operations: targets fixed at creation, each single action once, a refusal recorded, progress meanwhile.
  'test/api/bulk-operations',
  // Trust, part 2: console sessions that end, key scopes under concurrent revocation, subscriber identity.
  'test/api/console/console-session-ends.test.ts',
  'test/contract/admin-key-scopes.test.ts',
  'test/api/subscriptions/subscriber-identity.test.ts',
  'test/api/portal/portal-variants.test.ts',
  'test/api/platform/bigcommerce-e2e.test.ts',
  'test/api/subscriptions/variants.test.ts',
  'test/process/platform-crash.test.ts',
  'test/api/webhooks/delivery.test.ts',
  'test/api/webhooks/fanout-queue.test.ts',
  // Fair deliveries: a batch shared among due endpoints reaches the last of them, not only the first.
  'test/api/webhooks/every-due-endpoint-gets-a-turn.test.ts',
  // One store's backlog or hung endpoint does not delay another store's deliveries (issue 28: the claim walks endpoints).
  'test/api/webhooks/one-store-backlog-does-not-delay-another.test.ts',
  // The delivery inspector (headers as sent, the answer's first KiB) and endpoint health over 24 hours.
  'test/api/webhooks/delivery-inspector.test.ts',
  'test/api/portal/access-control.test.ts',
  'test/api/portal/auth-cache.test.ts',
  'test/contract/idempotency.test.ts',
  'test/api/events/events.test.ts',
  // Reactivation (the history trigger counts it again) and who did what: every event's actor, credentials never in it.
  'test/api/subscriptions/reactivation.test.ts',
  'test/api/events/event-actor.test.ts',
  // One clock for a test-mode store: the dispatcher's and the notification log's times from the store's row.
  'test/api/operations/test-clock-everywhere.test.ts',
  // Expected revenue from renewals over a hand-computed fixture, and add-ons that follow the renewal charged next.
  'test/api/analytics/expected-revenue.test.ts',
  'test/api/onetimes/addon-follows-the-renewal-that-charges.test.ts',
  // Search (partial email and name by trigram indexes, order ids, ids; wildcards literal) and the subscriber page.
  'test/api/subscriptions/subscription-search.test.ts',
  'test/api/subscriptions/subscriber-page.test.ts',
  // CSV exports: keyset pages by id over the server's collation, a pool's connection per page, streamed over HTTP.
  'test/api/exports/csv-exports-follow-the-lists.test.ts',
  'test/api/exports/exports-stream-thousands-of-rows-in-pages.test.ts',
  // Price changes with notice: pages of a plan's subscriptions locked by keyset (the (plan_id, id) index), their
  // events and notice emails in the page's transaction, and the renewal that first charges the new price.
  'test/api/subscriptions/price-change-with-notice.test.ts',
]

/** In test/db but left out of the PostgreSQL pass: it tests PGlite's own connection, whatever DATABASE_URL says. */
export const EMBEDDED_ONLY = new Set(['test/db/pglite-fifo.test.ts'])

function testFiles(path: string): string[] {
  const absolute = resolve(ROOT, path)
  if (!existsSync(absolute)) throw new Error(`no such test file or directory: ${path}`)
  if (!statSync(absolute).isDirectory()) return [relative(ROOT, absolute)]
  return readdirSync(absolute, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? testFiles(join(path, entry.name)) : entry.name.endsWith('.test.ts') ? [join(path, entry.name)] : []))
    .map((file) => relative(ROOT, resolve(ROOT, file)))
}

/** The files of `paths`, each once, longest known first, then by tier (process first), then by name. */
export function ordered(paths: readonly string[]): string[] {
  const files = [...new Set(paths.flatMap(testFiles))]
  const rank = (file: string) => {
    const known = LONGEST_FIRST.indexOf(file)
    if (known >= 0) return known
    const tier = TIERS.findIndex((dir) => file.startsWith(`${dir}/`))
    return LONGEST_FIRST.length + (tier >= 0 ? tier : TIERS.length)
  }
  return files.map((file, index) => ({ file, index, rank: rank(file) })).sort((a, b) => a.rank - b.rank || a.index - b.index).map(({ file }) => file)
}

/**
 * The tiers whose files share one process (node:test's `isolation: 'none'`): they build their apps on
 * in-memory databases of their own and leave no process state behind, so a process, its imports, its
 * PGlite and its compiled schemas per file (~4-6 s of CPU each, most of these files' time) buy nothing.
 * Measured on this 2-core machine: api, contract and unit files in one process 473 s of CPU against
 * ~900 s in a process each. The process and browser suites keep a process per file: they start servers,
 * CLIs and browsers, kill them and hold DATA_DIRs.
 */
export const SHARED_TIERS = ['test/db', 'test/contract', 'test/api', 'test/unit']

/**
 * Files of the shared tiers that keep a process of their own: they build their fixtures when loaded and
 * register tests from them (the access-control suite generates a test per route and credential from
 * fixtures holding 15-minute portal sessions), so in a shared lane, which loads every file before running
 * any, a slow lane could let those sessions expire and a refusal pass for the wrong reason.
 */
export const OWN_PROCESS = new Set(['test/api/portal/access-control.test.ts'])

