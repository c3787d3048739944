import type { Generated } from 'kysely'

/** Secrets the service generates once and keeps (session signing key, platform token key): src/db/kept-secrets.ts. */
export interface ServiceSecretsTable {
  name: string
  value: string
  created_at: Generated<Date>
}
