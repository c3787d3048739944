import type { Db, Executor } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { ensureStoreForHash, findStoreByHash } from '../stores/index.ts'
import type { PlatformConnections } from './connections.ts'
import { lockLiveConnection } from './platform.repository.ts'
import { assertAppConfigured, exchangeCode, verifySignedPayload, type PlatformAppSettings } from './platform-app.ts'

/** The scopes renewals need (docs/platform-api.md section 8); missing ones are logged at install. */
export const REQUIRED_SCOPES = [
  'store_v2_orders',
  'store_v2_transactions_read_only',
  'store_payments_access_token_create',
  'store_payments_methods_read',
  'store_v2_customers_read_only',
  'store_stored_payment_instruments_read_only',
  // Renewal orders are made through the store's own checkout (its tax and shipping): carts, then checkouts.
  // The scope table of the API accounts guide says `store_checkout` (checkouts.v3.yml says `store_checkouts`).
  'store_cart',
  'store_checkout',
  // Before a renewal's cart: how its products track stock (catalog), and the stock itself (inventory).
  'store_v2_products_read_only',
  'store_inventory_read_only',
] as const

/** Signs the merchant into the console from the load callback (src/modules/console-auth). */
/** A console session signed for the store, good once `record` keeps it in the caller's transaction (src/modules/console-auth). */
export type IssueConsoleSession = (storeId: string) => Promise<{ token: string; record: (executor: Executor, loadKey: string) => Promise<void> }>

export type PlatformAppService = ReturnType<typeof createPlatformAppService>

/** What the BigCommerce app's callbacks do: install, open in the control panel, uninstall. */
export function createPlatformAppService({ db, clock, settings, connections, issueConsoleSession }: {
  db: Db
  clock: Clock
  settings: PlatformAppSettings
  connections: PlatformConnections
  /** Without it, load answers a page instead of opening the console. */
  issueConsoleSession?: IssueConsoleSession | undefined
}) {
  return {
    /** 503 before anything else is looked at when the app is not configured: the operator learns what to set. */
    assertConfigured: () => assertAppConfigured(settings),

    /** The auth callback: the code becomes the store's token; the store is made live when unknown. */
    async install(callback: { code: string; scope: string; context: string }) {
      const granted = await exchangeCode(settings, callback)
      const store = await ensureStoreForHash(db, granted.storeHash)
      await connections.connect(store.id, { accessToken: granted.accessToken, source: 'app', scopes: granted.scopes })
      const scopes = granted.scopes.split(' ').filter(Boolean)
      return { store, scopes, missing: REQUIRED_SCOPES.filter((needed) => !scopes.includes(needed)) }
    },

    /** The load callback: a console session for a connected store, or why there is none. */
    async load(signedPayload: string): Promise<{ storeHash: string; storeId?: string; connected: boolean; consoleSession?: string }> {
      const { storeHash, loadKey } = await verifySignedPayload(settings, signedPayload, clock.now())
      const store = await findStoreByHash(db, storeHash)
      const connected = store ? (await connections.status(store.id)).connected : false
      if (!store || !connected || !issueConsoleSession) return { storeHash, connected }
      // Kept under the connection's row lock: an uninstall landing meanwhile either comes first (no
      // session) or waits and then ends this one with the others; none outlives it.
      const session = await issueConsoleSession(store.id)
      const kept = await db.transaction().execute(async (trx) => {
        if (!(await lockLiveConnection(trx, store.id))) return false
        await session.record(trx, loadKey)
        return true
      })
      if (!kept) return { storeHash, connected: false }
      return { storeHash, storeId: store.id, connected, consoleSession: session.token }
    },

    /** The uninstall callback: the token is deleted and the store's billing stops; its data stays. */
    async uninstall(signedPayload: string): Promise<{ storeHash: string; storeId?: string }> {
      const { storeHash } = await verifySignedPayload(settings, signedPayload, clock.now())
      const store = await findStoreByHash(db, storeHash)
      if (!store) return { storeHash }
      await connections.disconnect(store.id)
      return { storeHash, storeId: store.id }
    },
  }
}
