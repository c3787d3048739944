// TEMPORARY experiment (not to be kept): which statement of an import grows with the store's size.
import { createReadStream } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { sql } from 'kysely'
import { openBenchDatabase } from './lib/database-bench.ts'
import { runCleanup } from './lib/cleanup.ts'
import { writeNativeFile } from './lib/import-files.ts'
import { StatementProfiler } from './lib/statement-profiler.ts'
import { COMMAND_LINE } from '../src/http/actors.ts'
import { systemClock } from '../src/lib/clock.ts'
import { createImportsModule } from '../src/modules/imports/index.ts'
import { createStore } from '../src/modules/stores/index.ts'
import { testModules } from '../test/helpers/modules.ts'

const ROWS = Number(process.env.ROWS ?? 200_000)
const { db } = await openBenchDatabase(process.env.DATABASE_URL || undefined, 10)
try {
  const store = await createStore(db, { storeHash: 'degrade', mode: 'test' })
  const catalog = testModules(db, { clock: systemClock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: '101', name: 'Coffee beans' })
  const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1250, currency: 'USD', interval: 'month' })
  const file = join(tmpdir(), `degrade-${process.pid}.csv`)
  await writeNativeFile(file, { count: ROWS, planId: plan.id, nextChargeAt: new Date(Date.now() + 3 * 86400000), prefix: 'd' })
  let profiler = new StatementProfiler((node, queryId) => db.getExecutor().compileQuery(node, queryId).sql, { keyLength: 90 })
  const profiled = db.withPlugin({ transformQuery: (a) => profiler.transformQuery(a), transformResult: (a) => profiler.transformResult(a) })
  const { events } = testModules(profiled, { clock: systemClock })
  const service = createImportsModule({ db: profiled, clock: systemClock, events }).service
  let chunk = 0
  let started = performance.now()
  const print = async (rows: number) => {
    const secs = (performance.now() - started) / 1000
    console.log(`\nrows up to ${rows}: ${Math.round(ROWS / 4 / secs)} rows/s`)
    for (const [statement, e] of [...profiler.statements].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6)) console.log(`${(e.ms / e.count).toFixed(1).padStart(8)} ms/stmt  ${statement}`)
    profiler = new StatementProfiler((node, queryId) => db.getExecutor().compileQuery(node, queryId).sql, { keyLength: 90 })
    started = performance.now()
  }
  const pending: number[] = []
  await service.run(store, createReadStream(file), { format: 'native', dryRun: false, actor: COMMAND_LINE, bytesTotal: null, onProgress: (view) => { if (view.rows >= ((chunk + 1) * ROWS) / 4) { chunk++; pending.push(view.rows); void print(view.rows) } } })
  const ids = Array.from({ length: 500 }, (_, i) => `d-${ROWS - 1 - i}`)
  const plan2 = await sql.raw(`EXPLAIN (ANALYZE, BUFFERS) select id, external_id from subscriptions where store_id = '${store.id}' and (external_id in (${ids.map((i) => `'${i}'`).join(',')}) or id in (${ids.map((i) => `'${i}'`).join(',')}))`).execute(db)
  console.log((plan2.rows as any[]).map((r) => r['QUERY PLAN']).join('\n'))
} finally {
  await runCleanup()
}
