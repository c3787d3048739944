/**
 * What a search of the subscription list (`q`, docs/contract.md, Search and the subscriber page) looks for, decided from the
 * text alone: a pure function, so what matches is argued here and tested without a database.
 *
 * - `pattern`: a case-insensitive LIKE pattern for any part of the subscriber's email or name; the
 *   text's own `%`, `_` and `\` are escaped, so every character of it is matched literally.
 * - `orderIds`: the platform order ids it may be, exactly (a leading `#`, as order numbers are
 *   written, is dropped): the order that started a subscription and every renewal order.
 * - `subscriptionIdPrefix`: the start of a subscription id (`sub_...`, any case), when it is one.
 * - `subscriberId`: the subscriber id (`cus_...`) it is, exactly, when it is one.
 */
export interface SearchTerms {
  pattern: string
  orderIds: string[]
  subscriptionIdPrefix: string | null
  subscriberId: string | null
}

/** The longest search text, in characters: an email is at most 254, a name 200. */
export const SEARCH_MAX_LENGTH = 254

/** `text` with LIKE's wildcards and its escape character escaped (PostgreSQL's default escape is `\`). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`)
}

/** The search `q` stands for; `q` is trimmed and non-empty (the route's schema and the service see to it). */
export function searchTerms(q: string): SearchTerms {
  const text = q.trim()
  const orderIds = [text]
  if (text.startsWith('#') && text.length > 1) orderIds.push(text.slice(1).trim())
  // Ids are a lowercase prefix and an uppercase ULID (src/lib/ids.ts): "SUB_01j..." is the same id.
  const id = /^(sub|cus)_([0-9a-z]*)$/i.exec(text)
  const prefix = id?.[1]!.toLowerCase()
  const normalized = id ? `${prefix}_${id[2]!.toUpperCase()}` : null
  return {
    pattern: `%${escapeLike(text)}%`,
    orderIds: [...new Set(orderIds)],
    subscriptionIdPrefix: prefix === 'sub' ? normalized : null,
    subscriberId: prefix === 'cus' && id![2]!.length > 0 ? normalized : null,
  }
}
