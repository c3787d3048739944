import { Type } from 'typebox'
import type { Db } from '../../db/database.ts'
import { problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { notFound } from '../../lib/errors.ts'
import { findStoreByHash } from './stores.repository.ts'

export const StorefrontStore = Type.Object(
  {
    object: Type.Literal('storefront_store'),
    store_hash: Type.String(),
    name: Type.String({ description: "The store's name, as the portal and widgets show it" }),
  },
  { $id: 'StorefrontStore', title: 'StorefrontStore', additionalProperties: false },
)

const Query = Type.Object({ store_hash: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })

/** What a page may show about a store without credentials: its name. */
export async function storefrontStoreRoutes(app: App, { db }: { db: Db }): Promise<void> {
  app.get('/storefront/store', {
    schema: {
      operationId: 'getStorefrontStore',
      summary: "A store's public name, for the portal's sign-in page and widgets",
      tags: ['Storefront'],
      security: [],
      querystring: Query,
      response: { 200: Ref(StorefrontStore), ...problemResponses(404) },
    },
  }, async (request, reply) => {
    const store = await findStoreByHash(db, request.query.store_hash)
    if (!store) throw notFound('store', request.query.store_hash)
    reply.header('cache-control', 'public, max-age=60')
    return { object: 'storefront_store' as const, store_hash: store.store_hash, name: store.name }
  })
}
