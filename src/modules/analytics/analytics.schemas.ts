import { Type, type Static } from 'typebox'
import { Currency, Nullable, Timestamp } from '../../http/schemas.ts'

/** The default window: the 30 days before `to`. */
export const DEFAULT_WINDOW_DAYS = 30
/** The longest window a summary answers: a year, leap years included. */
export const MAX_WINDOW_DAYS = 366

const Count = Type.Integer({ minimum: 0 })
const Rate = (description: string) => Nullable(Type.Number({ minimum: 0, description }))

export const AnalyticsSummaryQuery = Type.Object(
  {
    from: Type.Optional({ ...Timestamp, description: "Start of the window, inclusive (default: 30 days before `to`)" }),
    to: Type.Optional({ ...Timestamp, description: "End of the window, exclusive (default: the store's current time, its test clock in test mode)" }),
  },
  { additionalProperties: false },
)

export const CurrencyFigures = Type.Object(
  {
    currency: Currency,
    mrr: Type.Integer({
      minimum: 0,
      description:
        'Monthly recurring revenue at `to`, integer minor units: for each subscription active or past_due at `to`, amount x quantity normalised to a month ' +
        '(day x 365/12, week x 52/12, month x 1, year / 12, each divided by interval_count and by the cycles one charge pays for: a 3-month prepaid block of 6120 is 2040), summed exactly and rounded half up once per currency',
    }),
    active_subscriptions: { ...Count, description: 'Subscriptions active or past_due at `to` (the ones MRR counts)' },
    new_subscriptions: { ...Count, description: 'Subscriptions created in the window, whatever their status since' },
    churned_subscriptions: { ...Count, description: 'Subscriptions that became cancelled or expired in the window' },
    churn_rate: Rate('churned_subscriptions / subscriptions active or past_due at `from`, rounded to 4 decimals; null when none were; can exceed 1 when subscriptions created in the window also end in it'),
    dunning: Type.Object(
      {
        failed_charges: { ...Count, description: 'Renewals (one subscription, one period) whose first failed attempt settled in the window; retries of the same period are not counted again, nor attempts that failed because an item was out of stock (`failure_code` `out_of_stock`: the card was never asked)' },
        recovered: { ...Count, description: 'Of those, the renewals paid by a later succeeded charge for the same subscription and period, settled before `to`' },
        recovery_rate: Rate('recovered / failed_charges, rounded to 4 decimals; null when failed_charges is 0'),
      },
      { additionalProperties: false },
    ),
    revenue: Type.Integer({ description: 'Succeeded charges settled in the window less succeeded refunds settled in the window (integer minor units; negative when refunds exceed charges)' }),
  },
  { additionalProperties: false, title: 'AnalyticsCurrencyFigures' },
)

export const AnalyticsSummary = Type.Object(
  {
    object: Type.Literal('analytics_summary'),
    from: Timestamp,
    to: Timestamp,
    currencies: Type.Array(CurrencyFigures, { description: 'One entry per currency with any figure other than zero, by currency code' }),
  },
  { additionalProperties: false, title: 'AnalyticsSummary' },
)

export type CurrencyFiguresView = Static<typeof CurrencyFigures>
export type AnalyticsSummaryView = Static<typeof AnalyticsSummary>

/** How many days a series covers by default: the console's overview charts 90. */
export const DEFAULT_SERIES_DAYS = 90

export const AnalyticsTimeseriesQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WINDOW_DAYS, default: DEFAULT_SERIES_DAYS, description: `How many days, today included (default ${DEFAULT_SERIES_DAYS})` })),
  },
  { additionalProperties: false },
)

export const AnalyticsTimeseries = Type.Object(
  {
    object: Type.Literal('analytics_timeseries'),
    timezone: Type.String({ description: "The store's time zone: each point is one calendar day there" }),
    points: Type.Array(
      Type.Object(
        {
          date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: "The day, in the store's time zone" }),
          from: Timestamp,
          to: Timestamp,
          currencies: Type.Array(CurrencyFigures, { description: 'As in the summary, for this day: MRR and active at its end; new, churned, dunning and revenue during it' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Oldest first; the last point is today, up to now' },
    ),
  },
  { additionalProperties: false, title: 'AnalyticsTimeseries' },
)


/** How many days the expected-revenue forecast looks ahead by default. */
export const DEFAULT_FORECAST_DAYS = 30

export const ExpectedRevenueQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WINDOW_DAYS, default: DEFAULT_FORECAST_DAYS, description: `How many days ahead, from now (default ${DEFAULT_FORECAST_DAYS})` })),
  },
  { additionalProperties: false },
)

export const ExpectedRevenue = Type.Object(
  {
    object: Type.Literal('expected_revenue'),
    from: { ...Timestamp, description: "The window's start, inclusive: the store's current time (a test-mode store's test clock)" },
    to: { ...Timestamp, description: "The window's end, exclusive: `days` calendar days after `from` in the store's time zone" },
    days: Type.Integer({ minimum: 1, maximum: MAX_WINDOW_DAYS }),
    currencies: Type.Array(
      Type.Object(
        {
          currency: Currency,
          amount: Type.Integer({ minimum: 0, description: 'What the renewals due in the window will charge, integer minor units: each priced as the renewal engine prices it (price x quantity, discount, add-ons, shipping, tax)' }),
          renewals: { ...Count, description: 'How many renewals that is (a weekly subscription counts each week)' },
        },
        { additionalProperties: false },
      ),
      { description: 'One entry per currency with a renewal in the window, by currency code' },
    ),
  },
  { additionalProperties: false, title: 'ExpectedRevenue' },
)
export type ExpectedRevenueView = Static<typeof ExpectedRevenue>
