export { Store, type StoreView } from './store.schemas.ts'
export {
  findActiveKeyByHash,
  findStoreByHash,
  findStoreById,
  findStoreByIdUnless,
  findStoresByIds,
  listAdminKeys,
  listStores,
  setTestClock,
  storeDaysOf,
  storeClockOf,
  storeHashOf,
  storeIdOfHash,
  touchKey,
} from './stores.repository.ts'
export { createAdminKey, createStore, ensureBootstrapStore, presentStore, revokeAdminKey, updateStoreSettings } from './stores.service.ts'
export { storeRoutes } from './stores.routes.ts'
export { storeNow } from './store-clock.ts'
export { StorefrontStore, storefrontStoreRoutes } from './storefront-store.routes.ts'
