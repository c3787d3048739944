import type { Engine } from '../../db/connect.ts'
import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import { createPlatformConnections, type DisconnectReaction, type PlatformConnections } from './connections.ts'
import { createPlatformAppService, type IssueConsoleSession, type PlatformAppService } from './platform-app.service.ts'
import { platformAppRoutes } from './platform-app.routes.ts'
import type { PlatformAppSettings } from './platform-app.ts'
import { createPlatformBudget, type PlatformBudget } from './platform-budget.ts'
import { createPlatformClient, type PlatformClient } from './platform-client.ts'
import { platformConnectionRoutes } from './platform-connection.routes.ts'
import { PaymentInstrument, PlatformConnection } from './platform.schemas.ts'
import { createPlatformCustomers, type PlatformCustomers } from './platform-customers.ts'
import { createProductVariants, type ProductVariants } from './product-variants.ts'
import { createStoredInstruments, type StoredInstruments } from './stored-instruments.ts'
import { createTokenVault, resolveTokenKey, type TokenVault } from './token-vault.ts'

export interface PlatformModuleDeps {
  db: Db
  clock: Clock
  /** Where a generated token key is kept: beside the embedded database's data, or in PostgreSQL. */
  keyStore: { engine: Engine; dataDir: string }
  settings: {
    /** PLATFORM_API_URL and PLATFORM_PAYMENTS_URL. */
    apiUrl: string
    paymentsUrl: string
    timeoutMs: number
    /** PLATFORM_TOKEN_KEY; undefined: one is generated once and kept. */
    tokenKey: Buffer | undefined
    app: Omit<PlatformAppSettings, 'timeoutMs' | 'dispatcher'>
  }
  /** Signs the merchant into the console from the app's load callback (src/modules/console-auth). */
  issueConsoleSession?: IssueConsoleSession
  /** Told once a connection change to a store's row (its billing stopped or resumed) has committed. */
  onStoreChanged?: (storeId: string) => void
  /** Runs in the transaction that removes a store's connection (an uninstall or a disconnect). */
  onDisconnect?: DisconnectReaction
}

export interface PlatformService {
  /** One keep-alive pool to BigCommerce for the whole process: renewals, instruments, order webhooks. */
  client: PlatformClient
  /** Each store's share of its platform quota, fed by the client's answers (CONTRACT section 19). */
  budget: PlatformBudget
  connections: PlatformConnections
  /** Stores' platform tokens, encrypted at rest. */
  vault: TokenVault
  /** Customers' stored instruments, read live. */
  instruments: StoredInstruments
  /** Catalogue products' variants, read live. */
  variants: ProductVariants
  /** Customers by email, read live (an import's subscribers). */
  customers: PlatformCustomers
  app: PlatformAppService
}

/** The connection to BigCommerce: each store's token, the HTTP client, customers' stored instruments and the app's callbacks. */
export function createPlatformModule({ db, clock, keyStore, settings, issueConsoleSession, onStoreChanged, onDisconnect }: PlatformModuleDeps): Module<PlatformService> {
  const vault = createTokenVault(() => resolveTokenKey({ configured: settings.tokenKey, ...keyStore, db }))
  // Connection times are real times, whatever a store's test clock says.
  const connections = createPlatformConnections({ db, vault, clock, onDisconnect, ...(onStoreChanged ? { onStoreChanged } : {}) })
  // Rate-limit windows are real time, whatever a store's test clock says.
  const budget = createPlatformBudget({ db })
  const client = createPlatformClient({ apiUrl: settings.apiUrl, paymentsUrl: settings.paymentsUrl, timeoutMs: settings.timeoutMs, budget })
  const instruments = createStoredInstruments({ client, accessOf: connections.accessOf })
  const variants = createProductVariants({ client, accessOf: connections.accessOf })
  const customers = createPlatformCustomers({ client, accessOf: connections.accessOf })
  const app = createPlatformAppService({ db, clock, settings: { ...settings.app, timeoutMs: settings.timeoutMs }, connections, issueConsoleSession })
  const service: PlatformService = { client, budget, connections, vault, instruments, variants, customers, app }
  return {
    name: 'platform',
    service,
    routes: {
      admin: (routes) => platformConnectionRoutes(routes, connections),
      platform: (routes) => platformAppRoutes(routes, app),
    },
    schemas: [PlatformConnection, PaymentInstrument],
    close: async () => {
      await client.close()
      await budget.settled()
    },
  }
}

export { createPlatformConnections, type ConnectReaction, type PlatformAccess, type PlatformConnections } from './connections.ts'
export { PaymentInstrument, PaymentInstrumentList, PlatformConnection, type PaymentInstrumentListView, type PlatformConnectionView } from './platform.schemas.ts'
export { REQUIRED_SCOPES } from './platform-app.service.ts'
export type { PlatformAppSettings } from './platform-app.ts'
export { createTokenVault, type TokenVault } from './token-vault.ts'
export { createPlatformClient, problemText, rateLimitWaitMs, type PlatformAnswer, type PlatformCall, type PlatformClient, type PlatformReply } from './platform-client.ts'
export { createPlatformBudget, rateHeadersOf, type PlatformBudget } from './platform-budget.ts'
export { DEFAULT_QUOTA, nextBudgetReset, renewalAllowance, grantPlatformCalls, returnPlatformCalls } from './platform-budget.repository.ts'
export { RENEWAL_ORDER_SOURCE } from './order-source.ts'
export { createProductVariants, parseVariant, type PlatformVariant, type ProductVariants } from './product-variants.ts'
export type { PlatformCustomers } from './platform-customers.ts'
export { createStoredInstruments, parseInstrument, presentInstrument, type PaymentInstrumentView, type PlatformInstrument, type StoredCard, type StoredInstruments } from './stored-instruments.ts'
