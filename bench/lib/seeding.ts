import { sql } from 'kysely'
import type { Db } from '../../src/db/database.ts'
import type { App } from '../../src/http/types.ts'

/** Seeds through the real admin API, so bench data is shaped exactly as the service makes it. */
export async function post(app: App, headers: Record<string, string>, url: string, payload: object): Promise<{ id: string }> {
  const response = await app.inject({ method: 'POST', url, headers, payload })
  if (response.statusCode !== 201) throw new Error(`seeding ${url} answered ${response.statusCode}: ${response.body}`)
  return response.json()
}

export async function serverVersion(db: Db): Promise<string> {
  const { rows } = await sql<{ server_version: string }>`SHOW server_version`.execute(db)
  return rows[0]?.server_version ?? 'unknown'
}
