import type { Db } from '../../db/database.ts'
import { anyLiveStoreHash } from '../stores/index.ts'

/**
 * A live store's subscribers are real people: with one in the database, a process without
 * `SMTP_URL` would write their sign-in links to the log. Refuses to start, naming the variable.
 */
export async function requireMailForLiveStores(db: Db, smtpUrl: string | undefined): Promise<void> {
  if (smtpUrl) return
  const live = await anyLiveStoreHash(db)
  if (live) {
    throw new Error(`SMTP_URL is required: store ${live} is live, and without SMTP_URL its subscribers' sign-in links would be written to the log instead of sent`)
  }
}
