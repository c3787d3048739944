import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import type { Engine } from '../../db/connect.ts'
import type { Db } from '../../db/database.ts'
import { keptSecret } from '../../db/kept-secrets.ts'

/**
 * Stores' platform access tokens are encrypted at rest with AES-256-GCM (node:crypto): a random
 * 12-byte IV per encryption, the 16-byte tag, and the store id as additional authenticated data, so
 * a ciphertext copied onto another store's row does not decrypt. The stored text is
 * base64(iv | ciphertext | tag) beside the version of the key that made it, so a later key can be
 * introduced (and rows re-encrypted) without reading every row at once. Tokens never leave this
 * file except to the gateway that sends them.
 */

const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_FILE = 'platform-token-key'
const KEY_ROW = 'platform_token_key'
/** The version of the one key there is today (PLATFORM_TOKEN_KEY or the generated one). */
export const CURRENT_KEY_VERSION = 1

export interface Sealed {
  ciphertext: string
  keyVersion: number
}

export interface TokenVault {
  seal(token: string, storeId: string): Promise<Sealed>
  /** The token, or undefined when it cannot be read (another key, or altered): the store counts as not connected. */
  open(sealed: Sealed, storeId: string): Promise<string | undefined>
  /**
   * A 32-byte secret derived from the key for one purpose (HKDF-SHA256, `label` as the info), e.g.
   * a store's webhook secret: recomputed when needed, never stored, and unrelated to the encryption
   * key for anyone who only sees the derived value.
   */
  derive(label: string): Promise<Buffer>
}

export interface TokenKeySource {
  /** PLATFORM_TOKEN_KEY, 32 bytes. */
  configured: Buffer | undefined
  engine: Engine
  /** Where the embedded database keeps a generated key; `memory://` keeps it in the database. */
  dataDir: string
  db: Db
}

/**
 * The key: configuration wins; otherwise one is generated once and kept as the portal's session
 * secret is (src/modules/portal-auth/session-secret.ts): next to the embedded database's data, or in
 * PostgreSQL's service_secrets so every process uses the same key. A kept key lives beside the data it
 * protects: production should configure PLATFORM_TOKEN_KEY (docs/bigcommerce.md).
 */
export async function resolveTokenKey({ configured, engine, dataDir, db }: TokenKeySource): Promise<Buffer> {
  if (configured) return configured
  return Buffer.from(await keptSecret({ engine, dataDir, db }, { file: KEY_FILE, row: KEY_ROW }, () => randomBytes(32).toString('base64')), 'base64')
}

/** A vault over a key resolved once, on first use. */
export function createTokenVault(key: () => Promise<Buffer>): TokenVault {
  let resolved: Promise<Buffer> | undefined
  const current = () => {
    if (!resolved) {
      resolved = key().then((value) => {
        if (value.length !== 32) throw new Error('the platform token key must be 32 bytes')
        return value
      })
      // A failed read (the database briefly away) is tried again next time.
      resolved.catch(() => { resolved = undefined })
    }
    return resolved
  }
  return {
    async seal(token, storeId) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', await current(), iv)
      cipher.setAAD(Buffer.from(storeId))
      const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()])
      return { ciphertext: Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64'), keyVersion: CURRENT_KEY_VERSION }
    },
    async open(sealed, storeId) {
      if (sealed.keyVersion !== CURRENT_KEY_VERSION) return undefined
      const bytes = Buffer.from(sealed.ciphertext, 'base64')
      if (bytes.length < IV_BYTES + TAG_BYTES) return undefined
      try {
        const decipher = createDecipheriv('aes-256-gcm', await current(), bytes.subarray(0, IV_BYTES))
        decipher.setAAD(Buffer.from(storeId))
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
      } catch {
        return undefined
      }
    },
    async derive(label) {
      return Buffer.from(hkdfSync('sha256', await current(), Buffer.alloc(0), Buffer.from(`subscription-billing:${label}`), 32))
    },
  }
}
