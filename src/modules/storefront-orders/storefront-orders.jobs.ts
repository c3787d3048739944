import { Type } from 'typebox'
import { jobKind, NoPayload } from '../../jobs/job-kinds.ts'

/** Registers (or repairs) a store's order webhooks on the platform; queued when a store connects and daily after. */
export const RegisterOrderHooks = jobKind('platform.register_order_hooks', Type.Object({ store_id: Type.String() }, { additionalProperties: false }))

/** Reads one order a callback named and starts the subscriptions it asks for, once paid. */
export const HandleOrderWebhook = jobKind(
  'platform.order_webhook',
  Type.Object({ store_id: Type.String(), order_id: Type.Integer({ minimum: 1 }), scope: Type.String(), hash: Type.String() }, { additionalProperties: false }),
)

/** Hourly upkeep: old receipts forgotten, connected stores' hooks checked again daily. */
export const MaintainOrderHooks = jobKind('platform.order_hooks_maintenance', NoPayload, { maxAttempts: 1_000_000 })
