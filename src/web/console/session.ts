import { createCredentialStore } from '../shared/session.ts'

/**
 * The console's credential: an admin API key typed at sign-in, or a console session (a one-hour
 * token the platform's load callback hands over in the address's fragment when the app is opened in
 * the BigCommerce control panel); both are sent as Authorization: Bearer and kept as
 * src/web/shared/session.ts keeps credentials (sessionStorage only).
 */
export type SignedInVia = 'api_key' | 'platform'

const store = createCredentialStore('console.session')

export function currentKey(): string | null {
  return store.current()?.token ?? null
}

export function signedInVia(): SignedInVia {
  return store.current()?.via === 'platform' ? 'platform' : 'api_key'
}

export function saveKey(key: string, via: SignedInVia = 'api_key'): void {
  store.save(key, { via })
}

export const clearKey = store.clear

/**
 * A console session handed over in the fragment (#console_session=...): kept in sessionStorage and
 * taken out of the address at once (so it is not in the history, a bookmark or a copied link).
 * Answers true when one was taken.
 */
export function takeSessionFromFragment(): boolean {
  const match = /^#console_session=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(location.hash)
  if (!location.hash.startsWith('#console_session=')) return false
  history.replaceState(null, '', location.pathname + location.search)
  if (!match) return false
  saveKey(match[1]!, 'platform')
  return true
}

/** What the signed-in credential may do (GET /credential): the console hides what it cannot. */
export type CredentialScope = 'full' | 'read_only' | 'support'
let scope: CredentialScope = 'full'

export function setCredentialScope(value: CredentialScope): void {
  scope = value
}

export function credentialScope(): CredentialScope {
  return scope
}

/** Whether the credential may make a change that needs `needs`: `support` (subscriptions, charges, change requests) or `full` (everything else). */
export function mayChange(needs: 'full' | 'support'): boolean {
  return scope === 'full' || (scope === 'support' && needs === 'support')
}
