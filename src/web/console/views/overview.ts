import uPlot from 'uplot'
import { api } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { currency, date, dateTime, minorDigits, money, number, percent } from '../format.ts'
import { errorText } from '../api.ts'
import type { AnalyticsSummary, AnalyticsTimeseries, CurrencyFigures, ExpectedRevenue } from '../types.ts'
import { errorBox, loading, pageHeader } from '../ui.ts'

type Figures = CurrencyFigures

const EMPTY: Figures = { currency: '', mrr: 0, active_subscriptions: 0, new_subscriptions: 0, churned_subscriptions: 0, churn_rate: null, dunning: { failed_charges: 0, recovered: 0, recovery_rate: null }, revenue: 0 }

/**
 * The overview: the analytics summary of the last 30 days in the store's currency, each figure with
 * a chart of its daily values over 90 days (GET /admin/analytics/timeseries), and what the renewals
 * of the next 30 days will charge (GET /admin/analytics/expected-revenue). Every figure is the
 * service's: the page adds nothing up.
 */
export async function renderOverview(app: ConsoleApp, isCurrent: () => boolean): Promise<void> {
  replaceChildren(app.main, pageHeader('Overview'), loading('Loading the figures…'))
  app.finishRender('Overview')
  const code = currency()
  let summary: AnalyticsSummary, series: AnalyticsTimeseries, expected: ExpectedRevenue | Error
  try {
    ;[summary, series, expected] = await Promise.all([
      api.analyticsSummary(),
      api.analyticsTimeseries(90),
      // The forecast failing leaves the other figures standing: its card says so.
      api.expectedRevenue(EXPECTED_DAYS).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
    ])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader('Overview'), errorBox(error))
    return
  }
  if (!isCurrent()) return
  const now = summary.currencies.find((c) => c.currency === code) ?? { ...EMPTY, currency: code }
  const others = summary.currencies.filter((c) => c.currency !== code)
  const daily = series.points.map((point) => point.currencies.find((c) => c.currency === code) ?? EMPTY)
  const days = series.points.map((point) => Date.parse(`${point.date}T12:00:00Z`) / 1000)
  // Charts plot currency units; the figures above them are the service's minor units, formatted.
  const scale = 10 ** minorDigits(code)

  const cards: { id: string; title: string; figure: string; note: string; values: (number | null)[]; kind: 'money' | 'count' | 'percent'; bars?: boolean }[] = [
    { id: 'mrr', title: 'Monthly recurring revenue', figure: money(now.mrr, code), note: 'Active and past due subscriptions, per month', values: daily.map((f) => f.mrr / scale), kind: 'money' },
    { id: 'active', title: 'Active subscriptions', figure: number(now.active_subscriptions), note: 'Active and past due now', values: daily.map((f) => f.active_subscriptions), kind: 'count' },
    { id: 'new', title: 'New subscriptions', figure: number(now.new_subscriptions), note: 'Last 30 days; chart: per day', values: daily.map((f) => f.new_subscriptions), kind: 'count', bars: true },
    { id: 'churned', title: 'Churned subscriptions', figure: number(now.churned_subscriptions), note: `Last 30 days; churn rate ${percent(now.churn_rate)}`, values: daily.map((f) => f.churned_subscriptions), kind: 'count', bars: true },
    { id: 'churn-rate', title: 'Churn rate', figure: percent(now.churn_rate), note: 'Last 30 days; chart: per day', values: daily.map((f) => (f.churn_rate === null ? null : f.churn_rate * 100)), kind: 'percent' },
    { id: 'recovery', title: 'Dunning recovery rate', figure: percent(now.dunning.recovery_rate), note: `${now.dunning.recovered} of ${now.dunning.failed_charges} failed renewals recovered, last 30 days`, values: daily.map((f) => (f.dunning.recovery_rate === null ? null : f.dunning.recovery_rate * 100)), kind: 'percent' },
    { id: 'revenue', title: 'Revenue', figure: money(now.revenue, code), note: 'Last 30 days, refunds taken off; chart: per day', values: daily.map((f) => f.revenue / scale), kind: 'money', bars: true },
  ]

  const grid = h('div', { class: 'cards' })
  replaceChildren(
    app.main,
    pageHeader('Overview', h('p', { class: 'subtitle' }, `Figures in ${code} for ${date(summary.from)} to ${date(summary.to)}; charts show the last 90 days, one point a day (${series.timezone}).`)),
    grid,
  )
  for (const card of cards) {
    const chart = h('div', { class: 'chart', role: 'img', 'aria-label': chartLabel(card.title, card.values, card.kind, code, series) })
    grid.append(h('section', { class: 'card', 'aria-labelledby': `card-${card.id}` }, h('h2', { id: `card-${card.id}` }, card.title), h('p', { class: 'figure', 'data-figure': card.id }, card.figure), chart, h('p', { class: 'note' }, card.note)))
    drawChart(chart, days, card.values, card.kind, code, card.bars ?? false)
    if (card.id === 'mrr') grid.append(expectedCard(expected, code))
  }
  if (others.length > 0) {
    grid.append(
      h('section', { class: 'card', 'aria-labelledby': 'card-others' }, h('h2', { id: 'card-others' }, 'Other currencies'), h('ul', null, others.map((f) => h('li', null, `${f.currency}: MRR ${money(f.mrr, f.currency)}, ${f.active_subscriptions} active, revenue ${money(f.revenue, f.currency)}${expectedIn(expected, f.currency)}`)))),
    )
  }
  app.refocusHeading()
}

/** How far ahead the overview's expected revenue looks. */
const EXPECTED_DAYS = 30

/**
 * What the renewals of the next 30 days will charge in the store's currency, as the service forecasts
 * it (every renewal due: weekly ones each week, after discounts, add-ons on their renewal). No chart:
 * it is one figure about the future.
 */
function expectedCard(expected: ExpectedRevenue | Error, code: string): HTMLElement {
  const title = `Expected from renewals, next ${EXPECTED_DAYS} days`
  if (expected instanceof Error) {
    return h('section', { class: 'card', 'aria-labelledby': 'card-expected' }, h('h2', { id: 'card-expected' }, title), h('p', { class: 'figure', 'data-figure': 'expected' }, '—'), h('p', { class: 'note' }, `Could not be loaded: ${errorText(expected)}`))
  }
  const figures = expected.currencies.find((c) => c.currency === code) ?? { amount: 0, renewals: 0 }
  const count = `${number(figures.renewals)} ${figures.renewals === 1 ? 'renewal' : 'renewals'}`
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'card-expected' },
    h('h2', { id: 'card-expected' }, title),
    h('p', { class: 'figure', 'data-figure': 'expected' }, money(figures.amount, code)),
    h('p', { class: 'note', 'data-figure': 'expected-renewals' }, `${count} due by ${dateTime(expected.to)}, after discounts and with add-ons`),
  )
}

/** ", expected $X from N renewals" for a currency other than the store's. */
function expectedIn(expected: ExpectedRevenue | Error, code: string): string {
  if (expected instanceof Error) return ''
  const figures = expected.currencies.find((c) => c.currency === code)
  return figures ? `, expected ${money(figures.amount, code)} from ${number(figures.renewals)} ${figures.renewals === 1 ? 'renewal' : 'renewals'} in ${EXPECTED_DAYS} days` : ''
}

/** What a chart shows, for screen readers: the range and the first and last values. */
function chartLabel(title: string, values: (number | null)[], kind: 'money' | 'count' | 'percent', code: string, series: AnalyticsTimeseries): string {
  const known = values.filter((v): v is number => v !== null)
  if (known.length === 0) return `${title}: no data over the last 90 days.`
  const show = (v: number) => (kind === 'money' ? money(Math.round(v * 10 ** minorDigits(code)), code) : kind === 'percent' ? `${number(v, { maximumFractionDigits: 1 })}%` : number(v))
  return `${title}, daily from ${series.points[0]?.date} to ${series.points.at(-1)?.date}: lowest ${show(Math.min(...known))}, highest ${show(Math.max(...known))}, latest ${show(known.at(-1)!)}.`
}

const dayLabel = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })

function drawChart(container: HTMLElement, days: number[], values: (number | null)[], kind: 'money' | 'count' | 'percent', code: string, bars: boolean): void {
  const stroke = '#2446c7'
  const format = (v: number) => (kind === 'money' ? new Intl.NumberFormat(undefined, { style: 'currency', currency: code, notation: 'compact', maximumFractionDigits: 1 }).format(v) : kind === 'percent' ? `${number(v, { maximumFractionDigits: 0 })}%` : number(v, { notation: 'compact' }))
  const width = () => Math.max(200, Math.floor(container.getBoundingClientRect().width) || 280)
  const options: uPlot.Options = {
    width: width(),
    height: 120,
    legend: { show: false },
    // Each point is a store day, stamped at its noon UTC: read back in UTC it is that day.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'UTC'),
    cursor: { show: false },
    scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min ?? 0), Math.max(max ?? 1, kind === 'percent' ? 10 : 1)] } },
    axes: [
      { stroke: '#4f5868', grid: { show: false }, ticks: { show: false }, size: 22, font: '11px system-ui, sans-serif', space: 50, values: (_u, splits) => splits.map((ts) => dayLabel.format(new Date(ts * 1000))) },
      { stroke: '#4f5868', grid: { stroke: '#e6e8ee', width: 1 }, ticks: { show: false }, size: 48, font: '11px system-ui, sans-serif', values: (_u, splits) => splits.map(format), space: 30 },
    ],
    series: [{}, bars ? { stroke, fill: 'rgba(36, 70, 199, 0.35)', width: 0, paths: uPlot.paths.bars!({ size: [0.7, 8] }), points: { show: false } } : { stroke, width: 2, fill: 'rgba(36, 70, 199, 0.08)', points: { show: false } }],
  }
  const plot = new uPlot(options, [days, values], container)
  // Charts follow the card's width (the grid reflows from 1 to 4 columns).
  let last = options.width
  new ResizeObserver(() => {
    const next = width()
    if (next !== last) plot.setSize({ width: (last = next), height: 120 })
  }).observe(container)
}
