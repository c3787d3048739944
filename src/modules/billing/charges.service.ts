import type { Db, StoreRow } from '../../db/database.ts'
import { notFound } from '../../lib/errors.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { presentCharge } from './charge.presenter.ts'
import type { CHARGE_STATUSES, ChargeView } from './charge.schemas.ts'
import { findCharge, listCharges, listChargesOfSubscription } from './charges.repository.ts'

export type ChargesService = ReturnType<typeof createChargesService>

/** Charge attempts as the merchant and the subscriber read them: every renewal and dunning retry, newest first. */
export function createChargesService({ db }: { db: Db }) {
  return {
    list(store: StoreRow, query: PageRequest & { subscription_id?: string | undefined; status?: (typeof CHARGE_STATUSES)[number] | undefined }): Promise<Page<ChargeView>> {
      return listPage(query, (bounds) => listCharges(db, store.id, { ...bounds, subscriptionId: query.subscription_id, status: query.status }), presentCharge)
    },

    async get(store: StoreRow, id: string): Promise<ChargeView> {
      const row = await findCharge(db, store.id, id)
      if (!row) throw notFound('charge', id)
      return presentCharge(row)
    },

    /** One subscription's attempts; the caller has checked the subscription is the actor's to see. */
    listOfSubscription(store: StoreRow, subscriptionId: string, page: PageRequest): Promise<Page<ChargeView>> {
      return listPage(page, (bounds) => listChargesOfSubscription(db, store.id, subscriptionId, bounds), presentCharge)
    },
  }
}
