import type { Db } from '../../db/database.ts'
import type { ChangeFeed } from '../../db/change-feed.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import { createAuthCache, type AuthCache } from './auth-cache.ts'
import { Store, StorefrontStore } from './store.schemas.ts'
import { storeAdminRoutes, storefrontStoreRoutes } from './stores.routes.ts'
import { createStoresService, type StoresService } from './stores.service.ts'

export interface StoresModuleDeps {
  db: Db
  clock: Clock
  /** Changes to the rows that authenticate requests, for the cache of them (src/db/change-feed.ts). */
  changes: ChangeFeed
}

export type StoresModuleService = StoresService & {
  /** The store and a key's or session's standing, kept in process while nothing changed. */
  auth: AuthCache
}

/** Stores, their settings and their admin API keys: the tenants every other module works for. */
export function createStoresModule({ db, clock, changes }: StoresModuleDeps): Module<StoresModuleService> {
  const auth = createAuthCache({ db, changes })
  const service = { ...createStoresService({ db, clock }), auth }
  return {
    name: 'stores',
    service,
    routes: {
      admin: (app) => storeAdminRoutes(app, service),
      storefront: (app) => storefrontStoreRoutes(app, service),
    },
    schemas: [Store, StorefrontStore],
    close: async () => auth.close(),
  }
}

export { Store, StorefrontStore, type StoreView } from './store.schemas.ts'
export { ENTRY_TTL_MS, LOCAL_WRITE_QUIET_MS, type AuthCache } from './auth-cache.ts'
export type { StoresService } from './stores.service.ts'
export { createAdminKey, createStore, ensureBootstrapStore, ensureStoreForHash, presentStore, revokeAdminKey, STORE_HASH_PATTERN, updateStoreSettings } from './stores.service.ts'
export {
  anyLiveStoreHash,
  billingStoreClocks,
  findStoreByHash,
  findStoreById,
  findStoresByIds,
  listAdminKeys,
  listStores,
  resumeStoreBilling,
  setTestClock,
  stopStoreBilling,
  storeBillsOf,
  storeClockOf,
  storeDaysOf,
  storeHashOf,
  storeIdOfHash,
} from './stores.repository.ts'
export { storeNow } from './store-clock.ts'
export { isNotificationOn, NOTIFICATION_TEMPLATES, NotificationSettings, notificationSettingsOf, type NotificationTemplate } from './notification-settings.ts'
export { CancellationReasons, RETENTION_OFFER_TYPES, RetentionOffers, type RetentionOfferInput, type RetentionOfferType } from './retention-settings.ts'
export type { CancellationReasonValue, RetentionOfferValue } from './stores.tables.ts'
