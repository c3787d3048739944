/** The admin key lives in sessionStorage only: gone when the tab closes, never in localStorage or a cookie. */
const KEY = 'console.admin_key'

export function currentKey(): string | null {
  try {
    return sessionStorage.getItem(KEY)
  } catch {
    return null
  }
}

export function saveKey(key: string): void {
  sessionStorage.setItem(KEY, key)
}

export function clearKey(): void {
  sessionStorage.removeItem(KEY)
}
