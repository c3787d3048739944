import type { FastifyReply, FastifyRequest } from 'fastify'
import { IdParams, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { PageRequest } from '../../lib/pagination.ts'
import type { PublicCatalog, StorefrontAnswer } from './public-catalog.service.ts'
import {
  LegacyStorefrontParams,
  LegacyStorefrontQuery,
  Plan,
  PlanPage,
  Product,
  ProductPage,
  PublicPlanListQuery,
  PublicProductListQuery,
  StorefrontPlans,
  StorefrontPlansQuery,
} from './catalog.schemas.ts'

// Browsers and CDNs may reuse a plan list for a minute; If-None-Match makes the next check cheap.
const STOREFRONT_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=300'

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch === '*' || ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}

/** Reads without credentials: storefront widgets and anyone browsing the catalogue. */
export async function publicCatalogRoutes(app: App, publicCatalog: PublicCatalog): Promise<void> {
  function sendAnswer(request: FastifyRequest, reply: FastifyReply, answer: StorefrontAnswer): FastifyReply {
    reply.header('etag', answer.etag).header('cache-control', STOREFRONT_CACHE_CONTROL)
    if (matches(request.headers['if-none-match'], answer.etag)) return reply.code(304).send()
    return reply.type('application/json; charset=utf-8').send(answer.body)
  }

  // A cached answer is sent at once (the handler returns nothing, having sent it); only a miss makes
  // the handler asynchronous, which costs every request a promise or two.
  function sendStorefrontPlans(request: FastifyRequest, reply: FastifyReply, storeHash: string, platformProductId: string, page: PageRequest): Promise<FastifyReply> | undefined {
    const answer = publicCatalog.storefrontPlans(storeHash, platformProductId, page)
    if (answer instanceof Promise) return answer.then((loaded) => sendAnswer(request, reply, loaded))
    sendAnswer(request, reply, answer)
    return undefined
  }

  const storefrontResponses = {
    200: Ref(StorefrontPlans),
    304: { description: 'Not modified: the ETag in If-None-Match is current', type: 'null' },
  }

  app.get('/storefront/plans', {
    schema: {
      operationId: 'listStorefrontPlans',
      summary: 'Plans a storefront widget may offer for one product',
      description:
        'Active plans of an active product, for widgets on any origin (CORS open), shortest billing cadence first, then lowest price. ' +
        'Pages like every list: `limit` (1-100, default 20) and `cursor` in, `next_cursor` out. An unknown store or product answers an empty list. ' +
        'Answers carry an ETag; send it back in If-None-Match for a 304.',
      tags: ['Storefront'],
      security: [],
      querystring: StorefrontPlansQuery,
      response: storefrontResponses,
    },
  }, (request, reply) => {
    const { store_hash, platform_product_id, limit, cursor } = request.query
    return sendStorefrontPlans(request, reply, store_hash, platform_product_id, { limit, cursor })
  })

  app.get('/storefront/products/:platform_product_id/plans', {
    schema: {
      operationId: 'listStorefrontPlansByProductPath',
      summary: 'Deprecated: use GET /api/v1/storefront/plans',
      description: 'The first widget release read plans under the product path. Same answer as the successor route.',
      tags: ['Storefront'],
      security: [],
      params: LegacyStorefrontParams,
      querystring: LegacyStorefrontQuery,
      response: storefrontResponses,
    },
  }, (request, reply) => {
    const { store_hash, limit, cursor } = request.query
    return sendStorefrontPlans(request, reply, store_hash, request.params.platform_product_id, { limit, cursor })
  })

  app.get('/products', {
    schema: {
      operationId: 'listPublicProducts',
      summary: "List a store's active products",
      tags: ['Catalogue (public)'],
      security: [],
      querystring: PublicProductListQuery,
      response: { 200: ProductPage },
    },
  }, async (request) => publicCatalog.listProducts(request.query))

  app.get('/products/:id', {
    schema: {
      operationId: 'getPublicProduct',
      summary: 'Read a product',
      tags: ['Catalogue (public)'],
      security: [],
      params: IdParams('prod'),
      response: { 200: Ref(Product), ...problemResponses(404) },
    },
  }, async (request) => publicCatalog.getProduct(request.params.id))

  app.get('/plans', {
    schema: {
      operationId: 'listPublicPlans',
      summary: "List a store's active plans",
      tags: ['Catalogue (public)'],
      security: [],
      querystring: PublicPlanListQuery,
      response: { 200: PlanPage },
    },
  }, async (request) => publicCatalog.listPlans(request.query))

  app.get('/plans/:id', {
    schema: {
      operationId: 'getPublicPlan',
      summary: 'Read a plan',
      tags: ['Catalogue (public)'],
      security: [],
      params: IdParams('plan'),
      response: { 200: Ref(Plan), ...problemResponses(404) },
    },
  }, async (request) => publicCatalog.getPlan(request.params.id))
}
