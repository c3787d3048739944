import assert from 'node:assert/strict'
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import v8 from 'node:v8'
import vm from 'node:vm'
import { after, before, describe, test } from 'node:test'
import { runCli } from '../../../src/cli.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { nativeRows } from './native-rows.ts'

/**
 * A large file through `npm run cli -- import` (docs/contract.md, Import): read as a stream, a batch
 * of 500 rows at a time, so the JavaScript heap stays flat whatever the file's size; the command
 * draws a progress bar on stderr and prints the report. 100,000 rows on PostgreSQL (the CI pass);
 * 10,000 on PGlite, to keep `npm test` short (bench:import runs 100,000 on both: BENCHMARKS.md).
 */
const ROWS = process.env.DATABASE_URL ? 100_000 : 10_000
/**
 * What the import may keep alive at any moment, over the heap before it: its batch, its matcher's
 * caches and the external ids seen (about 60 bytes a row). Measured after a full collection, so
 * garbage the collector has not reached yet does not count (it is not held).
 */
const RETAINED_BOUND_BYTES = 32 * 1024 * 1024
v8.setFlagsFromString('--expose-gc')
const collect = vm.runInNewContext('gc') as () => void

describe(`a ${ROWS}-row file imports from the command line in bounded memory`, () => {
  let t: TestApp
  let shop: StoreWithKey
  let dir: string
  let file: string
  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    dir = await mkdtemp(join(tmpdir(), 'import-'))
    file = join(dir, 'subscriptions.csv')
    await pipeline(nativeRows({ count: ROWS, planId: plan.id, nextChargeAt: new Date(Date.now() + 86_400_000) }), createWriteStream(file))
  })
  after(async () => {
    await t?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  test('every row is created, the bar reaches 100 %, and the heap stays bounded', async () => {
    let stdout = ''
    let stderr = ''
    collect()
    const baseline = process.memoryUsage().heapUsed
    let peak = baseline
    let frames = 0
    // Sampled as the import runs, at every 20th frame of its progress bar (a batch each): what is still
    // referenced after a full collection.
    const sample = () => {
      collect()
      peak = Math.max(peak, process.memoryUsage().heapUsed)
    }
    const code = await runCli(['import', file, '--store', shop.store.store_hash, '--format', 'native', '--json'], {
      env: { NODE_ENV: 'test', SEED_DEMO_DATA: 'false' },
      stdout: (text) => void (stdout += text),
      stderr: (text) => {
        stderr += text
        if (++frames % 20 === 0) sample()
      },
      database: t.database,
    })
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout)
    assert.deepEqual([report.status, report.rows, report.created, report.failed], ['completed', ROWS, ROWS, 0], JSON.stringify(report.errors.slice(0, 3)))
    const { n } = await t.db.selectFrom('subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()
    assert.equal(Number(n), ROWS)
    const drawn = stderr.split('\r').filter(Boolean)
    assert.ok(drawn.length >= ROWS / 500, `a frame per batch (${drawn.length})`)
    assert.match(drawn.at(-1)!, /\[#{30}\] 100%/)
    const grown = peak - baseline
    console.log(`retained heap grew by at most ${(grown / 1e6).toFixed(1)} MB over ${ROWS} rows; peak RSS ${(process.resourceUsage().maxRSS / 1e3).toFixed(0)} MB (the embedded database's memory included)`)
    assert.ok(grown < RETAINED_BOUND_BYTES, `the retained heap grew by ${(grown / 1e6).toFixed(0)} MB`)
  })
})
