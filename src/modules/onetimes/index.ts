import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventLog } from '../events/index.ts'
import type { Module } from '../module.ts'
import { Onetime } from './onetime.schemas.ts'
import { onetimeAdminRoutes, onetimePortalRoutes } from './onetimes.routes.ts'
import { createOnetimeService, type OnetimeService, type RenewalAt } from './onetimes.service.ts'

/** One-time add-ons: a product with a one-time price added to a subscription's next renewal. */
export function createOnetimesModule({ db, clock, events, renewalAt }: { db: Db; clock: Clock; events: EventLog; renewalAt?: RenewalAt }): Module<OnetimeService> {
  const service = createOnetimeService({ db, clock, events, renewalAt })
  return {
    name: 'onetimes',
    service,
    routes: {
      admin: (app) => onetimeAdminRoutes(app, service),
      portal: (app) => onetimePortalRoutes(app, service),
    },
    schemas: [Onetime],
  }
}

export { Onetime, type OnetimeView } from './onetime.schemas.ts'
export { presentOnetime, type OnetimeService, type RenewalAt } from './onetimes.service.ts'
export { markAddOnsCharged, pendingAddOns } from './onetimes.repository.ts'
