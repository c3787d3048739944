export { Store, type StoreView } from './store.schemas.ts'
export { createAuthCache, ENTRY_TTL_MS, type AuthCache, type AuthCacheInvalidation, type CacheTime } from './auth-cache.ts'
export {
  anyLiveStoreHash,
  billingStoreClocks,
  findActiveKeyByHash,
  findStoreByHash,
  findStoreById,
  findStoreByIdUnless,
  findStoresByIds,
  listAdminKeys,
  listStores,
  resumeStoreBilling,
  setTestClock,
  stopStoreBilling,
  storeDaysOf,
  storeBillsOf,
  storeClockOf,
  storeHashOf,
  storeIdOfHash,
  touchKey,
} from './stores.repository.ts'
export { createAdminKey, createStore, ensureBootstrapStore, ensureStoreForHash, STORE_HASH_PATTERN, presentStore, revokeAdminKey, updateStoreSettings } from './stores.service.ts'
export { storeRoutes } from './stores.routes.ts'
export { ApiKey, apiKeyRoutes } from './api-keys.routes.ts'
export { storeNow } from './store-clock.ts'
export { StorefrontStore, storefrontStoreRoutes } from './storefront-store.routes.ts'
