// The shape docs/architecture.md describes, checked on the source itself: layering rules by
// dependency-cruiser (.dependency-cruiser.mjs), module-level cycles, one factory per module, and no
// SQL in services. A change that breaks the house fails here with the file and the rule it broke.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { cruise, type ICruiseResult } from 'dependency-cruiser'
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'

const ROOT = new URL('../../', import.meta.url)
const MODULES = new URL('src/modules/', ROOT)

/** One cruise of src with the project's rules, shared by the tests below. */
async function cruiseSource(): Promise<ICruiseResult> {
  const cwd = process.cwd()
  // dependency-cruiser resolves paths from the working directory, as its command line does.
  process.chdir(new URL('.', ROOT).pathname)
  try {
    const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs')
    const reported = await cruise(['src'], { ...options, validate: true }, {}, { tsConfig: extractTSConfig('tsconfig.json') })
    return reported.output as ICruiseResult
  } finally {
    process.chdir(cwd)
  }
}

const moduleNames = readdirSync(MODULES, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()
const filesOf = (name: string) => readdirSync(new URL(`${name}/`, MODULES)).filter((file) => file.endsWith('.ts'))

describe('module boundaries (docs/architecture.md)', async () => {
  const result = await cruiseSource()

  test('no file breaks a layering rule: no file cycle, no module internals used from outside, no route file importing the database, no SQL outside repositories and engines', () => {
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((step) => step.name).join(' -> ')})` : ''}`)
    assert.deepEqual(violations, [])
    assert.ok(result.summary.totalCruised > 200, `the cruise saw the source (${result.summary.totalCruised} modules)`)
  })

  test('modules depend on each other without cycles (the graph of folders under src/modules is acyclic)', () => {
    const edges = new Map<string, Set<string>>()
    for (const file of result.modules) {
      const from = /^src\/modules\/([^/]+)\//.exec(file.source)?.[1]
      if (!from || file.source.endsWith('.tables.ts')) continue
      for (const dependency of file.dependencies) {
        const to = /^src\/modules\/([^/]+)\//.exec(dependency.resolved)?.[1]
        if (to && to !== from) edges.set(from, new Set([...(edges.get(from) ?? []), to]))
      }
    }
    const state = new Map<string, 'visiting' | 'done'>()
    const cycles: string[] = []
    const visit = (node: string, path: string[]) => {
      state.set(node, 'visiting')
      for (const next of edges.get(node) ?? []) {
        if (state.get(next) === 'visiting') cycles.push([...path, node, next].join(' -> '))
        else if (!state.has(next)) visit(next, [...path, node])
      }
      state.set(node, 'done')
    }
    for (const node of edges.keys()) if (!state.has(node)) visit(node, [])
    assert.deepEqual(cycles, [])
    assert.ok(edges.size >= 10, 'the module graph was built')
  })

  test('every module exports one factory, createXModule, from its index.ts, and routes take a service', () => {
    const problems: string[] = []
    for (const name of moduleNames) {
      const files = filesOf(name)
      if (!files.includes('index.ts')) {
        problems.push(`${name}: no index.ts`)
        continue
      }
      const index = readFileSync(new URL(`${name}/index.ts`, MODULES), 'utf8')
      const factory = `create${name.split('-').map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}Module`
      if (!new RegExp(`export function ${factory}\\(`).test(index)) problems.push(`${name}: index.ts does not export ${factory}(deps)`)
      for (const file of files.filter((candidate) => candidate.endsWith('.routes.ts'))) {
        const text = readFileSync(new URL(`${name}/${file}`, MODULES), 'utf8')
        if (/\bdb\s*[,:}]|\bDb\b/.test(text)) problems.push(`${name}/${file}: a route file names the database`)
      }
    }
    assert.deepEqual(problems, [])
    assert.ok(moduleNames.length >= 15, `found ${moduleNames.length} modules`)
  })

  test("services hold no SQL: a service calls its repositories (no query builder, no sql template)", () => {
    const problems: string[] = []
    for (const name of moduleNames) {
      for (const file of filesOf(name).filter((candidate) => candidate.endsWith('.service.ts'))) {
        const text = readFileSync(new URL(`${name}/${file}`, MODULES), 'utf8')
        for (const pattern of [/\.selectFrom\(/, /\.insertInto\(/, /\.updateTable\(/, /\.deleteFrom\(/, /\bsql`/]) {
          if (pattern.test(text)) problems.push(`${name}/${file}: ${pattern.source}`)
        }
      }
    }
    assert.deepEqual(problems, [])
  })
})
