import type { Db } from '../../db/database.ts'
import type { Engine } from '../../db/connect.ts'
import { keptSecret } from '../../db/kept-secrets.ts'
import { randomToken } from '../../lib/secrets.ts'

const SECRET_FILE = 'portal-session-secret'
const SECRET_ROW = 'portal_session_signing_key'

export interface SecretSource {
  configured: string | undefined
  engine: Engine
  dataDir: string
  db: Db
}

/**
 * The key that signs portal sessions. Configuration wins; otherwise the embedded database keeps one
 * next to its data, and PostgreSQL keeps one in the database so every process signs with the same key.
 * Generated once: a restart must not sign every subscriber out.
 */
export async function resolveSessionSecret({ configured, engine, dataDir, db }: SecretSource): Promise<Uint8Array> {
  if (configured) return new TextEncoder().encode(configured)
  return new TextEncoder().encode(await keptSecret({ engine, dataDir, db }, { file: SECRET_FILE, row: SECRET_ROW }, () => randomToken(32)))
}
