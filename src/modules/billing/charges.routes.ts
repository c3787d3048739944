import { Type } from 'typebox'
import type { Db } from '../../db/database.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { Id, IdParams, PageOf, PageQuery, problemResponses, Ref, StringEnum } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { notFound } from '../../lib/errors.ts'
import { decodeCursor, toPage } from '../../lib/pagination.ts'
import { presentCharge } from './charge.presenter.ts'
import { Charge, CHARGE_STATUSES } from './charge.schemas.ts'

const ChargeListQuery = Type.Object(
  {
    ...PageQuery,
    subscription_id: Type.Optional(Id('sub')),
    status: Type.Optional(StringEnum(CHARGE_STATUSES)),
  },
  { additionalProperties: false },
)

/** The merchant's view of charge attempts: every renewal and dunning retry, newest first. */
export async function chargeAdminRoutes(app: App, { db }: { db: Db }): Promise<void> {
  app.get('/charges', {
    schema: {
      operationId: 'listCharges',
      summary: 'Charge attempts, newest first',
      description: 'Filter by subscription or status. Each attempt is one row: a renewal is attempt 1, dunning retries of the same period count up from 2.',
      tags: ['Billing'],
      querystring: ChargeListQuery,
      response: { 200: PageOf(Ref(Charge), 'A page of charge attempts, newest first'), ...problemResponses(400) },
    },
  }, async (request) => {
    const store = adminStore(request)
    const { limit, cursor, subscription_id: subscriptionId, status } = request.query
    let query = db.selectFrom('charges').selectAll().where('store_id', '=', store.id)
    if (subscriptionId) query = query.where('subscription_id', '=', subscriptionId)
    if (status) query = query.where('status', '=', status)
    if (cursor) query = query.where('id', '<', decodeCursor(cursor))
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute()
    return toPage(rows, limit, presentCharge)
  })

  app.get('/charges/:id', {
    schema: {
      operationId: 'getCharge',
      summary: 'One charge attempt',
      tags: ['Billing'],
      params: IdParams('ch'),
      response: { 200: Ref(Charge), ...problemResponses(404) },
    },
  }, async (request) => {
    const store = adminStore(request)
    const row = await db.selectFrom('charges').selectAll().where('store_id', '=', store.id).where('id', '=', request.params.id).executeTakeFirst()
    if (!row) throw notFound('charge', request.params.id)
    return presentCharge(row)
  })
}
