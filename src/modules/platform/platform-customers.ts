import type { StoreRow } from '../../db/database.ts'
import type { PlatformAccess } from './connections.ts'
import type { PlatformClient } from './platform-client.ts'
import { platformUnavailable, waitedRead } from './waited-read.ts'

/**
 * The platform's customers by email (`GET /v3/customers?email:in=...`, customers reference
 * `getCustomers`: `{data, meta}`), for an import that names subscribers by email only. Only each
 * customer's id and email are kept. An email may belong to several customers (one per channel or
 * a duplicate account): the answer lists them all and the caller decides.
 */
export interface PlatformCustomers {
  /** Every customer id per lower-cased email asked about ([] for an email nobody has); undefined when the store is not connected. */
  idsByEmail(store: StoreRow, emails: readonly string[]): Promise<Map<string, string[]> | undefined>
}

/** Emails per request: the list travels in the query string, which stays well under common URL limits. */
const EMAILS_PER_CALL = 50
const PAGE_SIZE = 250
/** An import waits out the platform's rate limit longer than a person would: it is a batch. */
const DEFAULT_RATE_LIMIT_BUDGET_MS = 60_000

export function createPlatformCustomers({ client, accessOf, rateLimitBudgetMs = DEFAULT_RATE_LIMIT_BUDGET_MS }: { client: PlatformClient; accessOf(storeId: string): Promise<PlatformAccess | undefined>; rateLimitBudgetMs?: number }): PlatformCustomers {
  return {
    async idsByEmail(store, emails) {
      const access = await accessOf(store.id)
      if (!access) return undefined
      const wanted = [...new Set(emails.map((email) => email.toLowerCase()))]
      const found = new Map<string, string[]>(wanted.map((email) => [email, []]))
      for (let at = 0; at < wanted.length; at += EMAILS_PER_CALL) {
        const chunk = wanted.slice(at, at + EMAILS_PER_CALL)
        // A chunk's customers fit one page unless emails are shared by many accounts; read on while pages are full.
        for (let page = 1; ; page++) {
          const read = await waitedRead(
            client,
            access,
            { method: 'GET', path: '/v3/customers', query: { 'email:in': chunk.join(','), page: String(page), limit: String(PAGE_SIZE) }, rateLimitBudgetMs },
            { what: 'customers by email', scope: 'customers read' },
          )
          const data = (read?.body as { data?: unknown } | undefined)?.data
          if (read && !Array.isArray(data)) throw platformUnavailable('BigCommerce answered the customers by email with something that is not a list')
          const customers = (data ?? []) as { id?: unknown; email?: unknown }[]
          for (const customer of customers) {
            if (!Number.isInteger(customer.id) || typeof customer.email !== 'string') continue
            found.get(customer.email.toLowerCase())?.push(String(customer.id))
          }
          if (customers.length < PAGE_SIZE) break
        }
      }
      return found
    },
  }
}
