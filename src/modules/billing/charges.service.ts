import type { ChargeRow, Db, StoreRow } from '../../db/database.ts'
import { notFound } from '../../lib/errors.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { presentCharge } from './charge.presenter.ts'
import type { CHARGE_STATUSES, ChargeView } from './charge.schemas.ts'
import { findCharge, listCharges, listChargesOfSubscription } from './charges.repository.ts'
import { refundsOfCharges } from './refunds.repository.ts'

export type ChargesService = ReturnType<typeof createChargesService>

/** Charge attempts as the merchant and the subscriber read them: every renewal and dunning retry, newest first. */
export function createChargesService({ db }: { db: Db }) {
  /** The merchant's view: each charge with its refunds (reasons included). */
  async function withRefunds(rows: ChargeRow[]): Promise<ChargeView[]> {
    const refunds = await refundsOfCharges(db, rows.filter((row) => row.status === 'succeeded').map((row) => row.id))
    return rows.map((row) => presentCharge(row, refunds.get(row.id) ?? []))
  }

  return {
    async list(store: StoreRow, query: PageRequest & { subscription_id?: string | undefined; subscriber_id?: string | undefined; status?: (typeof CHARGE_STATUSES)[number] | undefined }): Promise<Page<ChargeView>> {
      const page = await listPage(query, (bounds) => listCharges(db, store.id, { ...bounds, subscriptionId: query.subscription_id, subscriberId: query.subscriber_id, status: query.status }), (row) => row)
      return { data: await withRefunds(page.data), next_cursor: page.next_cursor }
    },

    async get(store: StoreRow, id: string): Promise<ChargeView> {
      const row = await findCharge(db, store.id, id)
      if (!row) throw notFound('charge', id)
      return (await withRefunds([row]))[0]!
    },

    /**
     * One subscription's attempts as its subscriber reads them (the portal): `refund_status` and
     * `amount_refunded`, not the refunds' reasons. The caller has checked the subscription is the actor's to see.
     */
    listOfSubscription(store: StoreRow, subscriptionId: string, page: PageRequest): Promise<Page<ChargeView>> {
      return listPage(page, (bounds) => listChargesOfSubscription(db, store.id, subscriptionId, bounds), (row) => presentCharge(row))
    },
  }
}
