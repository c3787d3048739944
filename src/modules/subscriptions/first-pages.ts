import DataLoader from 'dataloader'
import type { Db, SubscriptionRow } from '../../db/database.ts'
import { listSubscriptions, listSubscriptionsOfEach } from './subscriptions.repository.ts'

/** A first page, unfiltered: one subscriber's subscriptions (the portal), or the whole store's (subscriberId null: the admin list). */
export interface FirstPageKey {
  storeId: string
  subscriberId: string | null
  limit: number
}

/**
 * First pages asked for during one turn of the event loop, read together (dataloader, no cache of
 * its own: every read is sent after it was asked for, so it sees every write committed before its
 * request arrived). Subscribers of one store with one page size share one statement
 * (listSubscriptionsOfEach); identical whole-store pages share one read.
 *
 * Why: under the realistic load (1,000 signed-in subscribers, 100 stores) a statement per request
 * cost about three times the CPU and a third of the throughput of the reads shared (BENCHMARKS.md,
 * issue 23): each statement is socket writes and reads for the driver, whatever its size.
 */
export function createFirstPageLoader(db: Db) {
  return new DataLoader<FirstPageKey, SubscriptionRow[]>(async (keys) => {
    const ofSubscribers = new Map<string, Promise<Map<string, SubscriptionRow[]>>>()
    const ofStores = new Map<string, Promise<SubscriptionRow[]>>()
    const groups = new Map<string, { storeId: string; limit: number; subscriberIds: string[] }>()
    for (const { storeId, subscriberId, limit } of keys) {
      if (subscriberId === null) continue
      const id = JSON.stringify([storeId, limit])
      const group = groups.get(id) ?? groups.set(id, { storeId, limit, subscriberIds: [] }).get(id)!
      group.subscriberIds.push(subscriberId)
    }
    for (const [id, { storeId, limit, subscriberIds }] of groups) ofSubscribers.set(id, listSubscriptionsOfEach(db, storeId, subscriberIds, { limit }))
    return Promise.all(keys.map(async ({ storeId, subscriberId, limit }) => {
      const id = JSON.stringify([storeId, limit])
      if (subscriberId !== null) return (await ofSubscribers.get(id)!).get(subscriberId) ?? []
      let read = ofStores.get(id)
      if (!read) ofStores.set(id, (read = listSubscriptions(db, storeId, { limit })))
      return read
    }))
  }, { cache: false, maxBatchSize: 1_000, batchScheduleFn: (dispatch) => setImmediate(dispatch) })
}
