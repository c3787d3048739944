/**
 * The credential lives in sessionStorage only: gone when the tab closes, never in localStorage or a
 * cookie. It is an admin API key typed at sign-in, or a console session (a one-hour token the
 * platform's load callback hands over in the address's fragment when the app is opened in the
 * BigCommerce control panel); both are sent as Authorization: Bearer.
 */
const KEY = 'console.admin_key'
const VIA = 'console.via'

export type SignedInVia = 'api_key' | 'platform'

export function currentKey(): string | null {
  try {
    return sessionStorage.getItem(KEY)
  } catch {
    return null
  }
}

export function signedInVia(): SignedInVia {
  try {
    return sessionStorage.getItem(VIA) === 'platform' ? 'platform' : 'api_key'
  } catch {
    return 'api_key'
  }
}

export function saveKey(key: string, via: SignedInVia = 'api_key'): void {
  sessionStorage.setItem(KEY, key)
  sessionStorage.setItem(VIA, via)
}

export function clearKey(): void {
  sessionStorage.removeItem(KEY)
  sessionStorage.removeItem(VIA)
}

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
