import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import { catalogAdminRoutes } from './catalog.routes.ts'
import { catalogSchemas } from './catalog.schemas.ts'
import { createCatalogService, type CatalogService } from './catalog.service.ts'
import { publicCatalogRoutes } from './public-catalog.routes.ts'
import { createPublicCatalog, type PublicCatalog } from './public-catalog.service.ts'

export interface CatalogModuleDeps {
  db: Db
  clock: Clock
  /** How long a storefront answer may be served from memory (other processes' writes show within it). */
  storefrontCacheTtlMs: number
}

export type CatalogModuleService = CatalogService & {
  /** Reads anyone may make: the storefront's plan lists and the public catalogue. */
  storefront: PublicCatalog
}

/** Products and the plans they are sold on: written by the merchant, read by storefronts without credentials. */
export function createCatalogModule({ db, clock, storefrontCacheTtlMs }: CatalogModuleDeps): Module<CatalogModuleService> {
  const storefront = createPublicCatalog({ db, cacheTtlMs: storefrontCacheTtlMs })
  // Writes here clear this process's cached storefront answers at once.
  const service = { ...createCatalogService({ db, clock, onChange: () => storefront.invalidate() }), storefront }
  return {
    name: 'catalog',
    service,
    routes: {
      admin: (app) => catalogAdminRoutes(app, service),
      storefront: (app) => publicCatalogRoutes(app, storefront),
    },
    schemas: catalogSchemas,
  }
}

export { Plan, Product, StorefrontPlans, type PlanView, type ProductView } from './catalog.schemas.ts'
export type { CatalogService } from './catalog.service.ts'
export { catalogueForImport, findPlanRow, findPlanRows, findProduct, findProductsByIds, isBusinessPlan, lockPlanRow, platformProductIdOf, setPlanAmount } from './catalog.repository.ts'
