import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Db } from '../../db/database.ts'
import type { Engine } from '../../db/connect.ts'
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
  if (engine === 'pglite' && dataDir !== 'memory://') return new TextEncoder().encode(secretFromFile(resolve(dataDir)))
  await db
    .insertInto('service_secrets')
    .values({ name: SECRET_ROW, value: randomToken(32) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', SECRET_ROW).executeTakeFirstOrThrow()
  return new TextEncoder().encode(row.value)
}

function secretFromFile(dataDir: string): string {
  const path = join(dataDir, SECRET_FILE)
  if (existsSync(path)) return readFileSync(path, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true })
  const secret = randomToken(32)
  // 'wx' fails rather than overwrite: the data directory lock makes this process the only writer.
  writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  return secret
}
