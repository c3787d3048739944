import type { Db, StoreRow } from '../../db/database.ts'
import { enqueue } from '../../jobs/job-kinds.ts'
import type { Actor } from '../../http/actors.ts'
import { addDays } from '../../lib/calendar.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { eventActor } from '../events/index.ts'
import { findStoreById, storeNow } from '../stores/index.ts'
import { findSubscribersByIds, findSubscriptionsByIds, type SubscriptionListFilter, type SubscriptionService } from '../subscriptions/index.ts'
import { MAX_BULK_TARGETS, type BulkItemView, type BulkOperationInput, type BulkOperationView, type BulkPreviewView } from './bulk-operation.schemas.ts'
import { addFailedItems, addItems, findOperation, findOperationById, finishOperation, insertOperation, listItems, listOperations, pendingItems, recordOutcome, refreshCounts, type BulkItemRow, type BulkOperationRow } from './bulk-operations.repository.ts'
import { RunBulkOperation } from './bulk-operations.jobs.ts'
import type { BulkAction } from './bulk-operations.tables.ts'

/**
 * The single actions a bulk operation runs, one subscription at a time, given by the composition root:
 * the same service calls as `POST /subscriptions/{id}/{action}` (same events, same 409 rules), so a
 * bulk swap is exactly as many swaps.
 */
export interface BulkActionRunners {
  swap: SubscriptionService['swap']
  pause: SubscriptionService['pause']
  resume: SubscriptionService['resume']
  cancel: SubscriptionService['cancel']
  reschedule: SubscriptionService['reschedule']
  applyDiscount(store: StoreRow, id: string, actor: Actor, code: string): Promise<unknown>
  /** The price change with notice of one subscription (module price-changes). */
  changePrice(store: StoreRow, id: string, actor: Actor, input: { amount: number; notice_days?: number | undefined }): Promise<unknown>
}

/** Targets run per job run: the job then hands the worker back and comes again (a big operation never holds a worker). */
export const BULK_ITEMS_PER_RUN = 100
const TARGET_PAGE = 500
const SAMPLE_SIZE = 10

type Params = NonNullable<BulkOperationInput['params']>

/** The params an action needs, checked before anything is written: a wrong call is 400 for the whole operation, not N refusals. */
function checkParams(action: BulkAction, params: Params): void {
  const need = (field: keyof Params, why: string) => {
    if (params[field] === undefined) throw invalidField(`/body/params/${field}`, why)
  }
  switch (action) {
    case 'swap_plan':
      return need('plan_id', 'is required to swap_plan')
    case 'change_price':
      return need('amount', 'is required to change_price')
    case 'reschedule':
      if ((params.next_charge_at === undefined) === (params.shift_days === undefined)) throw invalidField('/body/params', 'reschedule takes exactly one of next_charge_at and shift_days')
      if (params.shift_days === 0) throw invalidField('/body/params/shift_days', 'must not be 0')
      return
    case 'apply_discount':
      return need('code', 'is required to apply_discount')
    default:
      return
  }
}

export type BulkOperationsService = ReturnType<typeof createBulkOperationsService>

/**
 * Bulk operations (docs/contract.md, Bulk operations): one action over the subscriptions a filter (or a
 * list of ids) picks. The targets are fixed when it is created; the worker then runs the single action
 * on each, a page at a time, recording each outcome, so progress is visible meanwhile and one refusal
 * (a 409 on one subscription) never stops the others. A dry run counts the targets and shows a sample.
 */
export function createBulkOperationsService({ db, clock, subscriptions, actions }: { db: Db; clock: Clock; subscriptions: Pick<SubscriptionService, 'listRows'>; actions: BulkActionRunners }) {
  function present(row: BulkOperationRow): BulkOperationView {
    return {
      id: row.id,
      object: 'bulk_operation',
      action: row.action,
      params: row.params,
      filter: row.filter,
      status: row.status,
      total: row.total,
      done: row.succeeded + row.failed,
      succeeded: row.succeeded,
      failed: row.failed,
      results_url: `/api/v1/admin/bulk-operations/${row.id}/results`,
      actor: row.actor as BulkOperationView['actor'],
      created_at: toRfc3339(row.created_at),
      finished_at: toRfc3339OrNull(row.finished_at),
    }
  }

  /** Every target of a filter, a page at a time, newest first (the list's order); at most MAX_BULK_TARGETS + 1. */
  async function* targets(store: StoreRow, filter: SubscriptionListFilter, actor: Actor) {
    let cursor: string | undefined
    let seen = 0
    do {
      const page = await subscriptions.listRows(store, { ...filter, limit: TARGET_PAGE, cursor }, actor)
      yield page.data
      seen += page.data.length
      cursor = page.next_cursor ?? undefined
    } while (cursor && seen <= MAX_BULK_TARGETS)
  }

  async function runOne(store: StoreRow, operation: BulkOperationRow, item: BulkItemRow, actor: Actor): Promise<void> {
    const subscriptionId = item.subscription_id
    const params = operation.params as Params
    switch (operation.action) {
      case 'swap_plan':
        await actions.swap(store, subscriptionId, actor, { plan_id: params.plan_id!, ...(params.platform_variant_id !== undefined ? { platform_variant_id: params.platform_variant_id } : {}) })
        return
      case 'change_price':
        await actions.changePrice(store, subscriptionId, actor, { amount: params.amount!, notice_days: params.notice_days })
        return
      case 'reschedule': {
        // Only the renewal the operation chose is moved: one made meanwhile, or a move already done (a
        // retried run), is refused (409) instead of moved again onto a period just paid.
        const chosen = item.next_charge_at
        if (params.next_charge_at === undefined && !chosen) throw new AppError('invalid_state', 'it has no scheduled renewal to move')
        const at = params.next_charge_at ?? addDays(chosen!, params.shift_days!, store.timezone).toISOString()
        await actions.reschedule(store, item.subscription_id, actor, { next_charge_at: at }, chosen)
        return
      }
      case 'pause':
        await actions.pause(store, subscriptionId, actor, { resume_at: params.resume_at ?? null })
        return
      case 'resume':
        await actions.resume(store, subscriptionId, actor)
        return
      case 'cancel':
        await actions.cancel(store, subscriptionId, actor, { at_period_end: params.at_period_end, reason: params.reason })
        return
      case 'apply_discount':
        await actions.applyDiscount(store, subscriptionId, actor, params.code!)
        return
    }
  }

  return {
    async create(store: StoreRow, input: BulkOperationInput, actor: Actor): Promise<{ preview: BulkPreviewView } | { operation: BulkOperationView }> {
      const params = input.params ?? {}
      if ((input.filter === undefined) === (input.subscription_ids === undefined)) throw invalidField('/body', 'name the subscriptions with exactly one of filter and subscription_ids')
      checkParams(input.action, params)
      if (input.action === 'change_price' && params.notice_days !== undefined && params.notice_days < store.price_change_notice_days) {
        throw invalidField('/body/params/notice_days', `must be at least the store's price_change_notice_days (${store.price_change_notice_days})`)
      }
      const filter: SubscriptionListFilter | undefined = input.filter ? { limit: TARGET_PAGE, ...input.filter } : undefined

      if (input.dry_run) {
        let total = 0
        const sample: BulkPreviewView['sample'] = []
        const take = (rows: { subscription: { id: string; status: string; plan_id: string; next_charge_at: Date | null }; subscriber: { email: string } }[]) => {
          total += rows.length
          for (const { subscription, subscriber } of rows) {
            if (sample.length < SAMPLE_SIZE) sample.push({ id: subscription.id, status: subscription.status, plan_id: subscription.plan_id, next_charge_at: toRfc3339OrNull(subscription.next_charge_at), email: subscriber.email })
          }
        }
        if (filter) for await (const rows of targets(store, filter, actor)) take(rows)
        else {
          const found = await findSubscriptionsByIds(db, store.id, input.subscription_ids!)
          const subscribers = await findSubscribersByIds(db, store.id, found.map((row) => row.subscriber_id))
          take(found.map((subscription) => ({ subscription, subscriber: subscribers.get(subscription.subscriber_id)! })))
        }
        if (total > MAX_BULK_TARGETS) throw invalidField('/body/filter', `selects more than ${MAX_BULK_TARGETS} subscriptions: narrow it (a plan, a status, a range of next charges)`)
        return { preview: { object: 'bulk_operation_preview', action: input.action, dry_run: true, total, sample } }
      }

      const now = clock.now()
      const id = newId('bulk')
      // The filter's targets are read first (the list's own reads; the embedded database has one connection, so not inside the transaction).
      const chosen: { id: string; next_charge_at: Date | null }[] = []
      if (filter) {
        for await (const rows of targets(store, filter, actor)) {
          chosen.push(...rows.map(({ subscription }) => ({ id: subscription.id, next_charge_at: subscription.next_charge_at })))
          if (chosen.length > MAX_BULK_TARGETS) throw invalidField('/body/filter', `selects more than ${MAX_BULK_TARGETS} subscriptions: narrow it (a plan, a status, a range of next charges)`)
        }
      }
      // The targets are written with the operation and its job: the job only ever sees a complete set.
      const operation = await db.transaction().execute(async (trx) => {
        await insertOperation(trx, { id, store_id: store.id, action: input.action, params, filter: input.filter ?? null, actor: eventActor(actor) as unknown as Record<string, unknown>, now })
        if (filter) {
          for (let at = 0; at < chosen.length; at += TARGET_PAGE) await addItems(trx, store.id, id, chosen.slice(at, at + TARGET_PAGE), now)
        } else {
          const ids = input.subscription_ids!
          const found = await findSubscriptionsByIds(trx, store.id, ids)
          const owned = new Set(found.map((row) => row.id))
          await addItems(trx, store.id, id, found.map((row) => ({ id: row.id, next_charge_at: row.next_charge_at })), now)
          await addFailedItems(trx, store.id, id, ids.filter((sid) => !owned.has(sid)), 'not_found', 'no subscription of this store has this id', now)
        }
        const counted = await refreshCounts(trx, id, now)
        await enqueue(trx, RunBulkOperation, { bulk_operation_id: id }, { dedupeKey: `bulk:${id}`, storeId: store.id })
        return counted
      })
      return { operation: present(operation) }
    },

    async get(store: StoreRow, id: string): Promise<BulkOperationView> {
      const row = await findOperation(db, store.id, id)
      if (!row) throw notFound('bulk_operation', id)
      return present(row)
    },

    list(store: StoreRow, page: PageRequest): Promise<Page<BulkOperationView>> {
      return listPage(page, (bounds) => listOperations(db, store.id, bounds), present)
    },

    async results(store: StoreRow, id: string, query: PageRequest & { status?: string | undefined }): Promise<Page<BulkItemView>> {
      const row = await findOperation(db, store.id, id)
      if (!row) throw notFound('bulk_operation', id)
      return listPage(query, async (bounds) => (await listItems(db, id, { ...bounds, status: query.status })).map((item) => ({ ...item, id: item.subscription_id })), (item) => ({
        subscription_id: item.subscription_id,
        status: item.status,
        code: item.code,
        detail: item.detail,
        updated_at: toRfc3339(item.updated_at),
      }))
    },

    /**
     * Runs the next targets of an operation (the job's step): each through its single action, as the
     * operation's actor, its outcome recorded (a refusal with its problem code). Answers whether
     * targets are left. A target whose action committed just before a crash runs again when the job
     * is retried: its second outcome is recorded (a swap to the plan it is on is then 409).
     */
    async runStep(id: string, limit = BULK_ITEMS_PER_RUN): Promise<'done' | 'more'> {
      const operation = await findOperationById(db, id)
      if (!operation || operation.status === 'completed') return 'done'
      const store = await findStoreById(db, operation.store_id)
      if (!store) return 'done'
      const actor = actorOf(operation.actor)
      for (const item of await pendingItems(db, id, limit)) {
        let outcome: { status: 'succeeded' | 'failed'; code: string | null; detail: string | null }
        try {
          await runOne(store, operation, item, actor)
          outcome = { status: 'succeeded', code: null, detail: null }
        } catch (error) {
          // A problem of this one subscription (its 409, 404, 400) is its outcome; anything else stops the step and the job retries it.
          if (!(error instanceof AppError) || error.status >= 500) throw error
          outcome = { status: 'failed', code: error.code, detail: error.message }
        }
        await recordOutcome(db, id, item.subscription_id, outcome, clock.now())
      }
      const counted = await refreshCounts(db, id, clock.now())
      if (counted.succeeded + counted.failed < counted.total) return 'more'
      await finishOperation(db, id, storeNow(store, clock))
      return 'done'
    },
  }
}

/** The actor an operation was created by, as its events name it (kept in its row as the event log shows it). */
function actorOf(view: Record<string, unknown>): Actor {
  switch (view.type) {
    case 'admin_key':
      return { kind: 'admin_key', keyId: String(view.id), keyName: String(view.label ?? '') }
    case 'console':
      return { kind: 'console', sessionId: String(view.id) }
    default:
      throw new Error(`a bulk operation's actor must be a merchant's, not ${String(view.type)}`)
  }
}

