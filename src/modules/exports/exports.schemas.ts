import { Type, type TObject, type TProperties } from 'typebox'
import { ChargeListQuery } from '../billing/index.ts'
import { SEARCH_MAX_LENGTH, SubscriptionListQuery } from '../subscriptions/index.ts'

/** A list's query without its paging (`limit`, `cursor`): an export is every page. Unknown parameters stay refused. */
function withoutPaging<P extends TProperties>(query: TObject<P>) {
  const { limit: _limit, cursor: _cursor, ...filters } = query.properties
  return Type.Object(filters as Omit<P, 'limit' | 'cursor'>, { additionalProperties: false })
}

/** GET /subscriptions's filters: status, email, plan_id, q, subscriber_id. */
export const SubscriptionExportQuery = withoutPaging(SubscriptionListQuery)

/** GET /charges's filters: subscription_id, subscriber_id, status. */
export const ChargeExportQuery = withoutPaging(ChargeListQuery)

/** There is no subscriber list route: the filters a subscriber list would take, as the subscription list reads them. */
export const SubscriberExportQuery = Type.Object(
  {
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: "The subscriber's email, exactly (any case)" })),
    q: Type.Optional(
      Type.String({
        maxLength: SEARCH_MAX_LENGTH,
        description: "Search, case-insensitive: any part of the subscriber's email or name, or a subscriber id. Every character is matched as it is (`%` and `_` are not wildcards).",
        example: 'lovelace',
      }),
    ),
  },
  { additionalProperties: false },
)

/** The 200 answer of an export, as the OpenAPI document describes it. */
export function csvResponse(description: string) {
  return {
    description,
    headers: {
      'content-disposition': { type: 'string', description: 'attachment; filename="{kind}-{store hash}-{the store\'s date, YYYY-MM-DD}.csv"' },
    },
    content: { 'text/csv': { schema: { type: 'string', description: 'RFC 4180 CSV, UTF-8, CRLF between rows, a header row first' } } },
  }
}
