import type { Db, Executor } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { resumeStoreBilling, stopStoreBilling, storeHashOf } from '../stores/index.ts'
import { enqueueHookRegistration } from './order-webhooks.ts'
import type { PlatformConnectionSource } from './platform.tables.ts'
import type { PlatformConnectionView } from './platform.schemas.ts'
import type { TokenVault } from './token-vault.ts'

/** What the platform gateway needs to call the platform for a store. */
export interface PlatformAccess {
  storeHash: string
  accessToken: string
}

export interface PlatformConnections {
  /**
   * Keeps the store's token (replacing any earlier one), lets a stopped store bill again, and
   * enqueues the registration of its order webhooks (a job, so a failure is retried).
   */
  connect(storeId: string, input: { accessToken: string; source: PlatformConnectionSource; scopes?: string | undefined }): Promise<PlatformConnectionView>
  /** Deletes the store's token, marks the connection uninstalled and stops the store's billing; its data stays. */
  disconnect(storeId: string): Promise<PlatformConnectionView>
  status(storeId: string): Promise<PlatformConnectionView>
  /** The store's hash and decrypted token, or undefined when it is not connected. */
  accessOf(storeId: string): Promise<PlatformAccess | undefined>
}

export function createPlatformConnections({ db, vault, clock, onStoreChanged }: {
  db: Db
  vault: TokenVault
  clock: Clock
  /** Told once a change to the store's row (its billing stopped or resumed) has committed, so caches of it forget it. */
  onStoreChanged?: (storeId: string) => void
}): PlatformConnections {
  async function status(storeId: string, executor: Executor = db): Promise<PlatformConnectionView> {
    const row = await executor.selectFrom('platform_connections').selectAll().where('store_id', '=', storeId).executeTakeFirst()
    if (!row) return { object: 'platform_connection', connected: false }
    return {
      object: 'platform_connection',
      connected: row.access_token_ciphertext !== null,
      source: row.source,
      ...(row.scopes ? { scopes: row.scopes.split(' ').filter(Boolean) } : {}),
      connected_at: toRfc3339(row.connected_at),
      ...(row.uninstalled_at ? { uninstalled_at: toRfc3339(row.uninstalled_at) } : {}),
    }
  }

  return {
    status: (storeId) => status(storeId),

    async connect(storeId, { accessToken, source, scopes }) {
      const sealed = await vault.seal(accessToken, storeId)
      const now = clock.now()
      const connected = await db.transaction().execute(async (trx) => {
        const values = {
          source,
          access_token_ciphertext: sealed.ciphertext,
          key_version: sealed.keyVersion,
          scopes: scopes ?? null,
          connected_at: now,
          uninstalled_at: null,
          updated_at: now,
          // Hooks belong to the token that made them (§7.1): a new token registers (or finds) its own.
          hooks_registered_at: null,
        }
        await trx
          .insertInto('platform_connections')
          .values({ store_id: storeId, ...values })
          .onConflict((oc) => oc.column('store_id').doUpdateSet(values))
          .execute()
        await resumeStoreBilling(trx, storeId, now)
        await enqueueHookRegistration(trx, storeId)
        return status(storeId, trx)
      })
      onStoreChanged?.(storeId)
      return connected
    },

    async disconnect(storeId) {
      const now = clock.now()
      const disconnected = await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('platform_connections')
          .set({ access_token_ciphertext: null, key_version: null, uninstalled_at: now, updated_at: now })
          .where('store_id', '=', storeId)
          .where('access_token_ciphertext', 'is not', null)
          .execute()
        await stopStoreBilling(trx, storeId, now)
        return status(storeId, trx)
      })
      onStoreChanged?.(storeId)
      return disconnected
    },

    async accessOf(storeId) {
      const row = await db
        .selectFrom('platform_connections as c')
        .select(['c.access_token_ciphertext', 'c.key_version', storeHashOf('c.store_id').as('store_hash')])
        .where('c.store_id', '=', storeId)
        .executeTakeFirst()
      if (!row?.access_token_ciphertext || row.key_version === null) return undefined
      const accessToken = await vault.open({ ciphertext: row.access_token_ciphertext, keyVersion: row.key_version }, storeId)
      return accessToken === undefined ? undefined : { storeHash: row.store_hash, accessToken }
    },
  }
}
