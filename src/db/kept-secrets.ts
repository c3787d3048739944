import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Engine } from './connect.ts'
import type { Db } from './database.ts'

export interface KeptSecretSource {
  engine: Engine
  /** DATA_DIR, or 'memory://' for an in-memory database (which keeps its secrets in the database). */
  dataDir: string
  db: Db
}

/**
 * A secret generated once and kept where every process of the service finds the same one: a file
 * beside the embedded database's data (DATA_DIR is private to the service's user), or a row of
 * PostgreSQL's service_secrets. Answers the kept text; `generate` makes it the first time.
 */
export async function keptSecret(source: KeptSecretSource, name: { file: string; row: string }, generate: () => string): Promise<string> {
  if (source.engine === 'pglite' && source.dataDir !== 'memory://') return fromFile(join(resolve(source.dataDir), name.file), generate)
  await source.db
    .insertInto('service_secrets')
    .values({ name: name.row, value: generate() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await source.db.selectFrom('service_secrets').select('value').where('name', '=', name.row).executeTakeFirstOrThrow()
  return row.value
}

function fromFile(path: string, generate: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim()
  mkdirSync(resolve(path, '..'), { recursive: true })
  const secret = generate()
  // 'wx' fails rather than overwrite: the data directory lock makes this process the only writer.
  writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  return secret
}
