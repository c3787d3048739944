import { adminStore } from '../../http/admin-auth.ts'
import { problemResponses, Ref } from '../../http/schemas.ts'
import type { App, AppDeps } from '../../http/types.ts'
import type { AuthCacheInvalidation } from './auth-cache.ts'
import { Store, UpdateStoreBody } from './store.schemas.ts'
import { presentStore, updateStoreSettings } from './stores.service.ts'

/** Admin routes for the authenticated store's own settings. */
export async function storeRoutes(app: App, { db, clock, authCache }: AppDeps & { authCache: AuthCacheInvalidation }): Promise<void> {
  app.get('/store', {
    schema: {
      operationId: 'getStore',
      summary: 'Read the store the API key belongs to',
      tags: ['Store'],
      response: { 200: Ref(Store) },
    },
  }, async (request) => presentStore(adminStore(request)))

  app.patch('/store', {
    schema: {
      operationId: 'updateStore',
      summary: 'Change the store name, time zone, currency, billing settings or payment gateway',
      description: "`gateway` may be `test` or `platform` on a test-mode store; a live store always uses `platform` (`test` is 400 validation_failed).",
      tags: ['Store'],
      body: UpdateStoreBody,
      response: { 200: Ref(Store), ...problemResponses(404) },
    },
  }, async (request) => {
    const store = adminStore(request)
    const updated = await updateStoreSettings(db, store, request.body, clock.now())
    authCache.forgetStore(store.id)
    return updated
  })
}
