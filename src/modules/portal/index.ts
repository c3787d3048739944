import type { Clock } from '../../lib/clock.ts'
import type { ChargesService, UpcomingRenewals } from '../billing/index.ts'
import type { CatalogService } from '../catalog/index.ts'
import type { Module } from '../module.ts'
import type { StoredInstruments } from '../platform/index.ts'
import type { ChangeRequestService, SubscriptionService } from '../subscriptions/index.ts'
import { portalRoutes } from './portal.routes.ts'
import { SubscriptionVariant } from './portal.schemas.ts'
import { createPortalService, type PortalService } from './portal.service.ts'

export interface PortalModuleDeps {
  clock: Clock
  subscriptions: SubscriptionService
  changeRequests: ChangeRequestService
  charges: ChargesService
  upcoming: UpcomingRenewals
  catalog: CatalogService
  /** The platform customers' stored instruments (GET /payment-instruments on a platform store). */
  instruments: StoredInstruments
}

/**
 * What a signed-in subscriber may see and do: their profile, store, cards, subscriptions, charges and
 * change requests. Every route acts as the subscriber of the session, never one named in a request.
 */
export function createPortalModule({ clock, subscriptions, changeRequests, charges, upcoming, catalog, instruments }: PortalModuleDeps): Module<PortalService> {
  const service = createPortalService({ clock, subscriptions, charges, catalog, instruments })
  return {
    name: 'portal',
    service,
    routes: { portal: (app) => portalRoutes(app, { portal: service, upcoming, subscriptions, changeRequests }) },
    schemas: [SubscriptionVariant],
  }
}
