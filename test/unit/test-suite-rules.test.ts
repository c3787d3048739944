import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { LONGEST_FIRST, ordered, POSTGRES, TIERS } from '../../scripts/test-plan.ts'

/**
 * Rules the test suite keeps about itself (docs: README, "Tests"):
 *   - time inside the service (a lease, a retry, a backoff, a TTL, a grace period) is never waited out
 *     on the wall clock: the test moves the injected clock. A wait that is about something real outside
 *     the test's control flow (a process, a socket, a browser, an SMTP server) says so on the line above,
 *     in a comment starting `// wall clock:`;
 *   - files are named for the behaviour they prove, not for the review that asked for them.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TEST_DIR = join(ROOT, 'test')
// This file, whose samples below are the waits the rule looks for.
const SELF = 'test/unit/test-suite-rules.test.ts'

const NOT_YET = new Set<string>()

/** A sleep, a timer, or the timers module (whose functions can be renamed on import). */
const WAIT = /\b(?:sleep|setTimeout|setInterval)\(|timers\/promises/
const JUSTIFIED = /^\s*\/\/ wall clock: \S/

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(?:ts|js|mjs)$/.test(entry.name) ? [relative(ROOT, path).split('\\').join('/')] : []
  })
}

/** True when the run of `//` lines right above `index` has one starting `// wall clock:`. */
function justified(lines: string[], index: number): boolean {
  for (let above = index - 1; above >= 0 && /^\s*\/\//.test(lines[above]!); above--) {
    if (JUSTIFIED.test(lines[above]!)) return true
  }
  return false
}

/** Every line of the suite that waits on the wall clock without saying why: `path:line: text`. */
export function unjustifiedWaits(files: Iterable<{ path: string; text: string }>): string[] {
  const found: string[] = []
  for (const { path, text } of files) {
    const lines = text.split('\n')
    lines.forEach((line, index) => {
      if (/^\s*(?:\/\/|\*)/.test(line) || !WAIT.test(line)) return
      if (!justified(lines, index)) found.push(`${path}:${index + 1}: ${line.trim()}`)
    })
  }
  return found
}

describe('the test suite keeps its own rules', () => {
  const files = sourceFiles(TEST_DIR)

  test('the rule tells a justified wall-clock wait from an unjustified one', () => {
    const sample = (text: string) => unjustifiedWaits([{ path: 'x.ts', text }])
    const sleepy = ['await sleep(300)', 'await new Promise((resolve) => setTimeout(resolve, 10))', 'const timer = setInterval(tick, 5)', "import { setTimeout as wait } from 'node:timers/promises'"]
    for (const line of sleepy) {
      assert.deepEqual(sample(`const a = 1\n${line}`), [`x.ts:2: ${line}`], `flagged: ${line}`)
      assert.deepEqual(sample(`// wall clock: the child process needs to start\n${line}`), [], `justified: ${line}`)
      assert.deepEqual(sample(`// wall clock: why,\n// over two lines\n${line}`), [], `justified over two lines: ${line}`)
      assert.deepEqual(sample(`// waits for the lease\n${line}`), [`x.ts:2: ${line}`], `a comment that does not say wall clock: ${line}`)
      assert.deepEqual(sample(`// wall clock: a reason\n\n${line}`), [`x.ts:3: ${line}`], `a blank line breaks the link: ${line}`)
    }
    assert.deepEqual(sample('clock.advance(400)\nawait engine.reconcile()'), [])
  })

  test('no test waits on the wall clock without a `// wall clock:` comment saying why', (t) => {
    const checked = files.filter((path) => !NOT_YET.has(path) && path !== SELF).map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }))
    assert.ok(checked.length > 100, `the scan found the suite (${checked.length} files)`)
    const found = unjustifiedWaits(checked)
    assert.deepEqual(found, [], `Move the injected clock instead of waiting (src/lib/clock.ts), or poll for a real condition with a deadline and say why on the line above (// wall clock: ...):\n${found.join('\n')}`)
    // The list of exceptions only shrinks: say which entries are no longer needed.
    const gone = [...NOT_YET].filter((path) => !files.includes(path))
    if (gone.length > 0) t.diagnostic(`no longer in the suite, drop from NOT_YET: ${gone.join(', ')}`)
    const clean = [...NOT_YET].filter((path) => files.includes(path) && unjustifiedWaits([{ path, text: readFileSync(join(ROOT, path), 'utf8') }]).length === 0)
    if (clean.length > 0) t.diagnostic(`already keep the wall-clock rule, drop from NOT_YET: ${clean.join(', ')}`)
  })

  test('every test file is in a tier directory, so npm test runs it', () => {
    const tests = files.filter((path) => path.endsWith('.test.ts'))
    assert.deepEqual(tests.filter((path) => !TIERS.some((tier) => path.startsWith(`${tier}/`))), [])
    assert.deepEqual(ordered(TIERS).sort(), [...tests].sort())
    assert.deepEqual(LONGEST_FIRST.filter((path) => !tests.includes(path)), [], 'the runner starts these first: they must exist')
    assert.deepEqual(ordered(TIERS).slice(0, LONGEST_FIRST.length), LONGEST_FIRST, 'and they do start first, in that order')
  })

  test('every suite that needs PostgreSQL is in the PostgreSQL pass (npm run test:db), so it runs somewhere', () => {
    const postgresOnly = files.filter((path) => path.endsWith('.test.ts') && /skip:\s*(?:!onPostgres|onPostgres \? false)/.test(readFileSync(join(ROOT, path), 'utf8')))
    assert.ok(postgresOnly.length >= 5, `found the PostgreSQL-only suites: ${postgresOnly.join(', ')}`)
    const lane = new Set(ordered(POSTGRES))
    assert.deepEqual(postgresOnly.filter((path) => !lane.has(path)), [])
  })

  test('test files are named for the behaviour they prove, not for the review that asked for them', () => {
    const named = files.filter((path) => /(?:^|\/)review[\w-]*\.test\.ts$/.test(path) && !NOT_YET.has(path))
    assert.deepEqual(named, [], 'rename these after the rule they keep')
  })

})
