import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import { createAuthCache, type AuthCache, type CacheTime } from './auth-cache.ts'
import { Store, StoreChange, StorefrontStore } from './store.schemas.ts'
import { storeAdminRoutes, storefrontStoreRoutes } from './stores.routes.ts'
import { createStoresService, type RecordStoreChange, type StoresService } from './stores.service.ts'

export interface StoresModuleDeps {
  db: Db
  clock: Clock
  /** Where the authentication cache reads time (tests move it); performance by default. */
  cacheTime?: CacheTime
  /** Records `store.updated` in a settings change's transaction (the event log's, given by the composition root). */
  recordChange?: RecordStoreChange
}

export type StoresModuleService = StoresService & {
  /** The store and a key's or session's standing, kept in process for under a second (src/modules/stores/auth-cache.ts). */
  auth: AuthCache
}

/** Stores, their settings and their admin API keys: the tenants every other module works for. */
export function createStoresModule({ db, clock, cacheTime, recordChange }: StoresModuleDeps): Module<StoresModuleService> {
  const auth = createAuthCache({ db, ...(cacheTime ? { time: cacheTime } : {}) })
  // The service forgets what it changes in the cache once its write has committed.
  const service = { ...createStoresService({ db, clock, auth, recordChange }), auth }
  return {
    name: 'stores',
    service,
    routes: {
      admin: (app) => storeAdminRoutes(app, service),
      storefront: (app) => storefrontStoreRoutes(app, service),
    },
    schemas: [Store, StoreChange, StorefrontStore],
  }
}

export { Store, StoreChange, StorefrontStore, type StoreView } from './store.schemas.ts'
export { createAuthCache, ENTRY_TTL_MS, type AuthCache, type AuthCacheInvalidation, type CacheTime } from './auth-cache.ts'
export type { RecordStoreChange, SettingChange, StoreSettingsChange, StoresService } from './stores.service.ts'
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
  storesNotBilling,
  storeClockOf,
  storeDaysOf,
  storeHashOf,
  storeIdOfHash,
  storeTestClockOf,
} from './stores.repository.ts'
export { storeNow } from './store-clock.ts'
export { isNotificationOn, NOTIFICATION_TEMPLATES, NotificationSettings, notificationSettingsOf, type NotificationTemplate } from './notification-settings.ts'
export { CancellationReasons, RETENTION_OFFER_TYPES, RetentionOffers, type RetentionOfferInput, type RetentionOfferType } from './retention-settings.ts'
export type { CancellationReasonValue, RetentionOfferValue } from './stores.tables.ts'
