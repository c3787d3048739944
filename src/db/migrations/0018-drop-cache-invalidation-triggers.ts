import type { Kysely } from 'kysely'
import { down as dropCacheInvalidation, up as createCacheInvalidation } from './0015-cache-invalidation.ts'

/**
 * The authentication cache no longer listens for changes (src/modules/stores/auth-cache.ts keeps an
 * answer at most 0.9 s, and the code that writes forgets what it changed): migration 0015's triggers
 * and their function notify nobody, so they go. `down` puts them back as 0015 made them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await dropCacheInvalidation(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await createCacheInvalidation(db)
}
