import type { Db, Executor } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { resumeStoreBilling, stopStoreBilling } from '../stores/index.ts'
import { clearToken, findConnection, findSealedToken, markHooksRegistered, storesDueForHookCheck, upsertConnection } from './platform.repository.ts'
import type { PlatformConnectionSource } from './platform.tables.ts'
import type { PlatformConnectionView } from './platform.schemas.ts'
import type { TokenVault } from './token-vault.ts'

/** What the platform gateway needs to call the platform for a store. */
export interface PlatformAccess {
  storeHash: string
  accessToken: string
}

/**
 * Work that must happen exactly when a store connects (its order webhooks' registration queued, say),
 * inside the transaction that records the connection; registered by the module that does it.
 */
export type ConnectReaction = (trx: Executor, storeId: string) => Promise<void>
/** Run in the transaction that removes a store's connection (its console sessions end with it). */
export type DisconnectReaction = (trx: Executor, storeId: string, at: Date) => Promise<unknown>

export interface PlatformConnections {
  /**
   * Keeps the store's token (replacing any earlier one), lets a stopped store bill again, and runs
   * the connect reactions (the order webhooks' registration is queued as a job, so a failure is retried).
   */
  connect(storeId: string, input: { accessToken: string; source: PlatformConnectionSource; scopes?: string | undefined }): Promise<PlatformConnectionView>
  /** Deletes the store's token, marks the connection uninstalled and stops the store's billing; its data stays. */
  disconnect(storeId: string): Promise<PlatformConnectionView>
  status(storeId: string): Promise<PlatformConnectionView>
  /** The store's hash and decrypted token, or undefined when it is not connected. */
  accessOf(storeId: string): Promise<PlatformAccess | undefined>
  /** How a connected store connected (`app` or `api_account`), or undefined when it is not connected. */
  sourceOf(storeId: string): Promise<PlatformConnectionSource | undefined>
  /** Adds a reaction to every connection from now on (see ConnectReaction). */
  onConnect(reaction: ConnectReaction): void
  /** Connected stores whose order hooks were not registered since they connected, or not since `checkedBefore`. */
  dueForHookCheck(checkedBefore: Date): Promise<string[]>
  markHooksRegistered(storeId: string, at: Date): Promise<void>
}

export function createPlatformConnections({ db, vault, clock, onStoreChanged, onDisconnect }: {
  db: Db
  vault: TokenVault
  clock: Clock
  /** Runs in the disconnecting transaction: what must end with the connection does, or nothing does. */
  onDisconnect?: DisconnectReaction | undefined
  /** Told once a change to the store's row (its billing stopped or resumed) has committed, so caches of it forget it. */
  onStoreChanged?: (storeId: string) => void
}): PlatformConnections {
  const reactions: ConnectReaction[] = []

  async function status(storeId: string, executor: Executor = db): Promise<PlatformConnectionView> {
    const row = await findConnection(executor, storeId)
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
        await upsertConnection(trx, storeId, values)
        await resumeStoreBilling(trx, storeId, now)
        for (const reaction of reactions) await reaction(trx, storeId)
        return status(storeId, trx)
      })
      onStoreChanged?.(storeId)
      return connected
    },

    async disconnect(storeId) {
      const now = clock.now()
      const disconnected = await db.transaction().execute(async (trx) => {
        await clearToken(trx, storeId, now)
        await stopStoreBilling(trx, storeId, now)
        await onDisconnect?.(trx, storeId, now)
        return status(storeId, trx)
      })
      onStoreChanged?.(storeId)
      return disconnected
    },

    async accessOf(storeId) {
      const row = await findSealedToken(db, storeId)
      if (!row?.access_token_ciphertext || row.key_version === null) return undefined
      const accessToken = await vault.open({ ciphertext: row.access_token_ciphertext, keyVersion: row.key_version }, storeId)
      return accessToken === undefined ? undefined : { storeHash: row.store_hash, accessToken }
    },

    async sourceOf(storeId) {
      const row = await findSealedToken(db, storeId)
      return row?.access_token_ciphertext ? row.source : undefined
    },

    onConnect(reaction) {
      reactions.push(reaction)
    },

    dueForHookCheck: (checkedBefore) => storesDueForHookCheck(db, checkedBefore),
    markHooksRegistered: (storeId, at) => markHooksRegistered(db, storeId, at),
  }
}
