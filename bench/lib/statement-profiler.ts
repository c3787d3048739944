// The statement profiler behind the renewals and webhooks benches' --profile.
import { performance } from 'node:perf_hooks'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'

export interface StatementStats {
  count: number
  ms: number
}

export type CompileStatement = (node: RootOperationNode, queryId: PluginTransformQueryArgs['queryId']) => string

/**
 * Counts and times every statement sent through the Kysely it is plugged into (`db.withPlugin(profiler)`),
 * by its SQL with parameter lists folded and cut to `keyLength` characters. The time runs from compiling to
 * the decoded result, so it includes waiting for a pooled connection; BEGIN and COMMIT are not seen.
 */
export class StatementProfiler implements KyselyPlugin {
  readonly statements = new Map<string, StatementStats>()
  readonly #started = new WeakMap<object, { key: string; at: number }>()
  readonly #compile: CompileStatement
  readonly #keyLength: number

  constructor(compile: CompileStatement, options: { keyLength?: number } = {}) {
    this.#compile = compile
    this.#keyLength = options.keyLength ?? 110
  }

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    this.#started.set(queryId, { key: statementKey(this.#compile(node, queryId), this.#keyLength), at: performance.now() })
    return node
  }

  async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const started = this.#started.get(queryId)
    if (started) {
      const entry = this.statements.get(started.key) ?? { count: 0, ms: 0 }
      entry.count += 1
      entry.ms += performance.now() - started.at
      this.statements.set(started.key, entry)
    }
    return result
  }
}

function statementKey(text: string, length: number): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\(\$\d+(, \$\d+)*\)(, \(\$\d+(, \$\d+)*\))*/g, '(…)')
    .replace(/\$\d+(, \$\d+)+/g, '…')
    .trim()
    .slice(0, length)
}
