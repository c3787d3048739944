import { createSecretKey, type KeyObject } from 'node:crypto'

/**
 * A signing key fetched on first use (it may live in the database, which need not be migrated when
 * the app is assembled) and made a KeyObject once, so jose does not import the raw bytes again on
 * every sign and verify. `now()` answers it synchronously once loaded; a failed fetch is forgotten,
 * so a database hiccup does not poison every later request.
 */
export function lazySecretKey(secret: () => Promise<Uint8Array>): { load(): Promise<KeyObject>; now(): KeyObject | undefined } {
  let loading: Promise<KeyObject> | undefined
  let loaded: KeyObject | undefined
  return {
    load() {
      loading ??= secret()
        .then((bytes) => (loaded = createSecretKey(bytes)))
        .catch((error: unknown) => {
          loading = undefined
          throw error
        })
      return loading
    },
    now: () => loaded,
  }
}
