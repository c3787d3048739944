import type { AdminApiKeyRow, Db, Executor, StoreMode, StoreRow } from '../../db/database.ts'
import type { Actor } from '../../http/actor-kinds.ts'
import { canonicalJson } from '../../lib/canonical-json.ts'
import { systemClock, type Clock } from '../../lib/clock.ts'
import { isCheckViolation, isUniqueViolation } from '../../db/errors.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { isCurrency } from '../../lib/money.ts'
import { randomToken, sha256Hex } from '../../lib/secrets.ts'
import { isTimeZone, toRfc3339 } from '../../lib/time.ts'
import type { AuthCacheInvalidation } from './auth-cache.ts'
import type { StoreView, UpdateStoreInput } from './store.schemas.ts'
import { checkRetentionSettings, retentionSettingsUpdate } from './retention-settings.ts'
import { notificationSettingsOf } from './notification-settings.ts'
import { storeNow } from './store-clock.ts'
import * as repo from './stores.repository.ts'
import type { AdminKeyScope } from './stores.tables.ts'

export interface CreateStoreInput {
  storeHash: string
  name?: string
  mode?: StoreMode
  timezone?: string
  currency?: string
}

export function presentStore(store: StoreRow): StoreView {
  return {
    id: store.id,
    object: 'store',
    store_hash: store.store_hash,
    name: store.name,
    mode: store.mode,
    timezone: store.timezone,
    currency: store.currency,
    dunning_retry_days: store.dunning_retry_days,
    renewal_reminder_days: store.renewal_reminder_days,
    past_due_cancel_days: store.past_due_cancel_days,
    gateway: store.gateway,
    renewal_shipping: store.renewal_shipping,
    renewal_shipping_amount: store.renewal_shipping_amount,
    test_tax_rate_bps: store.test_tax_rate_bps,
    out_of_stock: store.out_of_stock,
    out_of_stock_retry_days: store.out_of_stock_retry_days,
    billing_stopped_at: store.billing_stopped_at ? toRfc3339(store.billing_stopped_at) : null,
    billing_enabled: store.billing_enabled,
    cancellation_reasons: store.cancellation_reasons,
    retention_offers: store.retention_offers,
    portal_reactivation: store.portal_reactivation,
    price_change_notice_days: store.price_change_notice_days,
    notifications: notificationSettingsOf(store.notifications),
    created_at: toRfc3339(store.created_at),
    updated_at: toRfc3339(store.updated_at),
  }
}

function checkSettings(input: { timezone?: string | undefined; currency?: string | undefined; dunning_retry_days?: number[] | undefined }, at: string): void {
  if (input.timezone !== undefined && !isTimeZone(input.timezone)) throw invalidField(`${at}/timezone`, 'is not an IANA time zone')
  if (input.currency !== undefined && !isCurrency(input.currency)) throw invalidField(`${at}/currency`, 'is not an ISO 4217 currency code')
  const days = input.dunning_retry_days
  if (days && days.some((day, i) => i > 0 && day <= days[i - 1]!)) {
    throw invalidField(`${at}/dunning_retry_days`, 'must be strictly ascending')
  }
}

export const STORE_HASH_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

export async function createStore(db: Db, input: CreateStoreInput): Promise<StoreRow> {
  if (!STORE_HASH_PATTERN.test(input.storeHash)) throw invalidField('/store_hash', 'must be 1-64 letters, digits, _ or -')
  checkSettings(input, '')
  try {
    return await repo.insertStore(db, {
      id: newId('store'),
      store_hash: input.storeHash,
      name: input.name ?? input.storeHash,
      mode: input.mode ?? 'test',
      gateway: input.mode === 'live' ? 'platform' : 'test',
      timezone: input.timezone ?? 'UTC',
      currency: input.currency ?? 'USD',
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('conflict', `store ${input.storeHash} already exists`)
    throw error
  }
}

/** One setting as it was and as it is (`store.updated`'s `changes`). */
export interface SettingChange {
  from: unknown
  to: unknown
}

/** A change of the store's settings, for the event log: who, when (the store's clock), the store after it and what changed. */
export interface StoreSettingsChange {
  storeId: string
  occurredAt: Date
  store: StoreView
  changes: Record<string, SettingChange>
  actor: Actor
}

/**
 * Records a change of settings in the caller's transaction (the composition root passes the event
 * log's: the stores module is built before the events module and cannot name it).
 */
export type RecordStoreChange = (trx: Executor, change: StoreSettingsChange) => Promise<unknown>

/**
 * The settings whose value differs, by field, with both values: every field the Store view shows
 * except `updated_at` (none of them is a secret). Compared as canonical JSON, so lists and objects
 * (`dunning_retry_days`, `notifications`, `retention_offers`) by content.
 */
export function settingChanges(before: StoreView, after: StoreView): Record<string, SettingChange> {
  const changes: Record<string, SettingChange> = {}
  for (const key of Object.keys(after) as (keyof StoreView)[]) {
    if (key === 'updated_at') continue
    if (canonicalJson(before[key]) !== canonicalJson(after[key])) changes[key] = { from: before[key], to: after[key] }
  }
  return changes
}

/**
 * Changes the store's settings under its row lock and, when `audit` is given and anything changed,
 * records `store.updated` naming who changed what, in the same transaction.
 */
export async function updateStoreSettings(
  db: Db,
  store: StoreRow,
  input: UpdateStoreInput,
  now: Date,
  audit?: { actor: Actor; clock: Clock; record: RecordStoreChange },
): Promise<StoreView> {
  checkSettings(input, '/body')
  checkRetentionSettings(input, '/body')
  // A live store's renewals move real money: only the platform can charge them.
  if (input.gateway === 'test' && store.mode === 'live') throw invalidField('/body/gateway', "must be 'platform' for a live store")
  const storeId = store.id
  input = { ...input, ...retentionSettingsUpdate(input) } as UpdateStoreInput
  const { notifications, ...settings } = input
  return db.transaction().execute(async (trx) => {
    // The row as it is now (the caller's may be a cached read): what changed is told from it.
    const before = await repo.lockStore(trx, storeId)
    if (!before) throw new AppError('not_found', `store ${storeId} was not found`)
    // A flat policy with no rate would ship for nothing while the merchant believes it charges.
    const flatAmount = input.renewal_shipping_amount === undefined ? before.renewal_shipping_amount : input.renewal_shipping_amount
    if ((input.renewal_shipping ?? before.renewal_shipping) === 'flat' && flatAmount === null) {
      throw invalidField('/body/renewal_shipping_amount', "is required when renewal_shipping is 'flat'")
    }
    const updated = await repo
      .updateStore(trx, storeId, {
        ...settings,
        // Switches not named keep their setting.
        ...(notifications ? { notifications: JSON.stringify({ ...before.notifications, ...notifications }) } : {}),
        updated_at: now,
      })
      .catch((error: unknown) => {
        // The database's own check stays the last word, should a write ever come without the lock.
        if (isCheckViolation(error, 'stores_flat_shipping_check')) throw invalidField('/body/renewal_shipping_amount', "is required when renewal_shipping is 'flat'")
        throw error
      })
    if (!updated) throw new AppError('not_found', `store ${storeId} was not found`)
    const view = presentStore(updated)
    if (audit) {
      const changes = settingChanges(presentStore(before), view)
      // A PATCH that sets what was already set changes nothing and records nothing.
      if (Object.keys(changes).length > 0) await audit.record(trx, { storeId, occurredAt: storeNow(updated, audit.clock), store: view, changes, actor: audit.actor })
    }
    return view
  })
}

/**
 * The store with this hash, created live when unknown (a merchant installing the BigCommerce app
 * runs a real store; an operator who wants a test-mode store creates it first, and it keeps its mode).
 */
export async function ensureStoreForHash(db: Db, storeHash: string): Promise<StoreRow> {
  if (!STORE_HASH_PATTERN.test(storeHash)) throw invalidField('/store_hash', 'must be 1-64 letters, digits, _ or -')
  return repo.insertStoreIfAbsent(db, { id: newId('store'), store_hash: storeHash, name: storeHash, mode: 'live', gateway: 'platform' })
}

const KEY_PREFIX_LENGTH = 12

/**
 * Makes a key of 256 random bits; only its hash is stored, so this is the one time it can be shown.
 * Its `created_at` is on the store's clock (a test store's test clock), as every time its pages show.
 */
export async function createAdminKey(db: Db, store: StoreRow, name = 'default', scope: AdminKeyScope = 'full', clock: Clock = systemClock): Promise<{ id: string; key: string }> {
  if (name.trim().length === 0 || name.length > 100) throw invalidField('/name', 'must be 1-100 characters')
  const key = `sk_${store.mode}_${randomToken(32)}`
  const row = await repo.insertAdminKey(db, {
    id: newId('key'),
    store_id: store.id,
    name,
    key_hash: sha256Hex(key),
    key_prefix: key.slice(0, KEY_PREFIX_LENGTH),
    scope,
    created_at: storeNow(store, clock),
  })
  return { id: row.id, key }
}

export async function revokeAdminKey(db: Db, keyId: string, now: Date): Promise<void> {
  const revoked = await repo.revokeAdminKey(db, keyId, now)
  if (!revoked) throw new AppError('not_found', `no active admin key ${keyId}`)
}

/**
 * Makes sure the configured bootstrap store exists and accepts the configured key, leaving every
 * other store and key as it is. Safe to run on every start and from several processes at once.
 * A key that was revoked stays revoked: revocation is an operator's decision a restart must not
 * undo; `warn` is told so (without the key) and a new key must be configured.
 */
export async function ensureBootstrapStore(
  db: Db,
  bootstrap: { storeHash: string; adminApiKey: string; mode: StoreMode },
  { warn }: { warn?: (message: string) => void } = {},
): Promise<StoreRow> {
  const store = await repo.insertStoreIfAbsent(db, {
    id: newId('store'),
    store_hash: bootstrap.storeHash,
    name: bootstrap.storeHash,
    mode: bootstrap.mode,
    gateway: bootstrap.mode === 'live' ? 'platform' : 'test',
  })
  const keyHash = sha256Hex(bootstrap.adminApiKey)
  const existing = await repo.findKeyByHash(db, keyHash)
  if (existing && existing.store_id !== store.id) {
    throw new Error('BOOTSTRAP_ADMIN_API_KEY already belongs to another store')
  }
  if (existing?.revoked_at) {
    warn?.(`BOOTSTRAP_ADMIN_API_KEY (${existing.key_prefix}..., key ${existing.id}) was revoked and stays revoked: configure a new key to use it for store ${bootstrap.storeHash}`)
  }
  if (!existing) {
    await repo.insertAdminKeyIfAbsent(db, { id: newId('key'), store_id: store.id, name: 'bootstrap', key_hash: keyHash, key_prefix: bootstrap.adminApiKey.slice(0, KEY_PREFIX_LENGTH) })
  }
  return store
}

export type StoresService = ReturnType<typeof createStoresService>

/**
 * What the admin API and the storefront do with stores: the store's settings and its admin keys.
 * Every write forgets what the authentication cache holds of it once it has committed, so this
 * process's next request sees it (others within the cache's second).
 */
export function createStoresService({ db, clock, auth, recordChange }: { db: Db; clock: Clock; auth: AuthCacheInvalidation; recordChange?: RecordStoreChange | undefined }) {
  return {
    present: presentStore,

    /** Changes settings; `store.updated` records who did it and what changed (when the root gave the event log). */
    async updateSettings(store: StoreRow, input: UpdateStoreInput, actor: Actor): Promise<StoreView> {
      const updated = await updateStoreSettings(db, store, input, clock.now(), recordChange ? { actor, clock, record: recordChange } : undefined)
      auth.forgetStore(store.id)
      return updated
    },

    listApiKeys: (store: StoreRow): Promise<AdminApiKeyRow[]> => repo.listAdminKeys(db, store.id),

    /** A new key, shown in this answer only, with its row. */
    async createApiKey(store: StoreRow, name: string, scope: AdminKeyScope = 'full'): Promise<{ row: AdminApiKeyRow; key: string }> {
      const created = await createAdminKey(db, store, name, scope, clock)
      const row = (await repo.listAdminKeys(db, store.id)).find((candidate) => candidate.id === created.id)!
      return { row, key: created.key }
    },

    /** Revokes one of the store's active keys at once, but never its last full one: the store would lock itself out of its keys and settings (the CLI can). */
    async revokeApiKey(store: StoreRow, id: string): Promise<AdminApiKeyRow> {
      // Checked and revoked under the keys' locks: two revocations at once cannot leave no full key.
      const revoked = await db.transaction().execute(async (trx) => {
        const keys = await repo.lockAdminKeys(trx, store.id)
        const target = keys.find((row) => row.id === id && row.revoked_at === null)
        if (!target) throw notFound('api key', id)
        if (target.scope === 'full' && keys.filter((row) => row.revoked_at === null && row.scope === 'full').length === 1) {
          throw new AppError('invalid_state', "this is the store's last active full-scope key: create another first, or revoke it with the CLI")
        }
        return repo.revokeStoreAdminKey(trx, store.id, target.id, storeNow(store, clock))
      })
      if (!revoked) throw notFound('api key', id)
      auth.forgetKey(revoked.key_hash)
      return revoked
    },

    /** What a page may show about a store without credentials: its name. */
    async storefrontStore(storeHash: string): Promise<{ object: 'storefront_store'; store_hash: string; name: string }> {
      const store = await repo.findStoreByHash(db, storeHash)
      if (!store) throw notFound('store', storeHash)
      return { object: 'storefront_store', store_hash: store.store_hash, name: store.name }
    },

    /** Records that a key was used, at the store's time (at most once a minute per key, by the admin authenticator). */
    touchKey: (keyId: string, store: StoreRow): Promise<void> => repo.touchKey(db, keyId, storeNow(store, clock)),
  }
}
