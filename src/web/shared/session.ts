/**
 * A signed-in credential (the portal's session token, the console's admin key or console session),
 * kept in sessionStorage only: this tab, gone when it closes, never localStorage, never a cookie.
 * Nothing else is stored.
 */
export interface Credential {
  token: string
  /** Epoch milliseconds after which the service no longer accepts it; null when it does not say. */
  expiresAt: number | null
  /** How it was obtained, when the app tells ways apart (the console: 'api_key' or 'platform'). */
  via: string | null
}

export interface CredentialStore {
  save(token: string, options?: { expiresAt?: number | null; via?: string | null }): Credential
  /** The stored credential unless it has expired; an expired or unreadable one is removed. */
  current(): Credential | null
  /** True when one was stored but has run out (as opposed to never having signed in). */
  expired(): boolean
  clear(): void
}

export function createCredentialStore(key: string): CredentialStore {
  const read = (): Partial<Credential> | null => {
    try {
      const text = sessionStorage.getItem(key)
      return text ? (JSON.parse(text) as Partial<Credential>) : null
    } catch {
      // Unreadable (or storage refused): signed out.
      return null
    }
  }
  const clear = () => {
    try {
      sessionStorage.removeItem(key)
    } catch {
      // nothing stored then
    }
  }
  return {
    save(token, { expiresAt = null, via = null } = {}) {
      const credential: Credential = { token, expiresAt, via }
      sessionStorage.setItem(key, JSON.stringify(credential))
      return credential
    },
    current() {
      const stored = read()
      if (stored && typeof stored.token === 'string' && (typeof stored.expiresAt !== 'number' || stored.expiresAt > Date.now())) {
        return { token: stored.token, expiresAt: typeof stored.expiresAt === 'number' ? stored.expiresAt : null, via: typeof stored.via === 'string' ? stored.via : null }
      }
      if (sessionStorageHas(key)) clear()
      return null
    },
    expired() {
      const stored = read()
      return typeof stored?.expiresAt === 'number' && stored.expiresAt <= Date.now()
    },
    clear,
  }
}

function sessionStorageHas(key: string): boolean {
  try {
    return sessionStorage.getItem(key) !== null
  } catch {
    return false
  }
}
