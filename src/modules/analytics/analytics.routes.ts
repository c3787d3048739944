import type { Db } from '../../db/database.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { problemResponses } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { Clock } from '../../lib/clock.ts'
import { storeNow } from '../stores/index.ts'
import { AnalyticsSummary, AnalyticsSummaryQuery } from './analytics.schemas.ts'
import { analyticsFigures, DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS, resolveWindow } from './analytics.service.ts'

/** The merchant's figures (docs/contract.md, Analytics). */
export async function analyticsRoutes(app: App, { db, clock }: { db: Db; clock: Clock }): Promise<void> {
  app.get('/analytics/summary', {
    schema: {
      operationId: 'getAnalyticsSummary',
      summary: 'MRR, active, new and churned subscriptions, dunning recovery and revenue, per currency, over a window',
      description:
        `The window is \`[from, to)\` on the store's clock (a test-mode store's test clock). Defaults: \`to\` now, \`from\` ${DEFAULT_WINDOW_DAYS} days before \`to\`. ` +
        `\`from\` must be before \`to\` and at most ${MAX_WINDOW_DAYS} days before it (400 otherwise). MRR and active subscriptions are as they stood at \`to\`; ` +
        'new, churned, dunning and revenue count what happened in the window. Paused subscriptions count in neither MRR nor active.',
      tags: ['Analytics'],
      querystring: AnalyticsSummaryQuery,
      response: { 200: AnalyticsSummary, ...problemResponses(400) },
    },
  }, async (request) => {
    const store = adminStore(request)
    const window = resolveWindow(request.query, storeNow(store, clock))
    const [currencies] = await analyticsFigures(db, store.id, [window])
    return { object: 'analytics_summary' as const, from: window.from.toISOString(), to: window.to.toISOString(), currencies: currencies! }
  })
}
