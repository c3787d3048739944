import { parseArgs, type ParseArgsOptionsConfig } from 'node:util'
import type { LoadSettings } from './load.ts'

export interface BenchSettings extends LoadSettings {
  /** Times each server is loaded, alternately, so a burst of other work on the machine skews one round, not the verdict. */
  rounds: number
}

/** The load every bench uses unless told otherwise: the 100 connections, pipelining 10, 10 s. */
export const DEFAULT_SETTINGS: BenchSettings = { connections: 100, pipelining: 10, durationSeconds: 10, warmupSeconds: 2, rounds: 1 }

const OPTIONS = {
  duration: { env: 'BENCH_DURATION', key: 'durationSeconds' },
  warmup: { env: 'BENCH_WARMUP', key: 'warmupSeconds' },
  connections: { env: 'BENCH_CONNECTIONS', key: 'connections' },
  pipelining: { env: 'BENCH_PIPELINING', key: 'pipelining' },
  rounds: { env: 'BENCH_ROUNDS', key: 'rounds' },
} as const

export const SETTINGS_HELP = `Options (or environment variables):
  --duration N      measured seconds per server (BENCH_DURATION, default ${DEFAULT_SETTINGS.durationSeconds})
  --warmup N        unmeasured seconds before each run (BENCH_WARMUP, default ${DEFAULT_SETTINGS.warmupSeconds})
  --connections N   concurrent connections (BENCH_CONNECTIONS, default ${DEFAULT_SETTINGS.connections})
  --pipelining N    requests in flight per connection (BENCH_PIPELINING, default ${DEFAULT_SETTINGS.pipelining})
  --rounds N        load each server N times, alternately; the verdict takes the median (BENCH_ROUNDS, default ${DEFAULT_SETTINGS.rounds})
Environment only:
  BENCH_NODE_ARGS   extra Node flags for the server processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"`

/** Command-line flags win over environment variables, which win over the defaults. */
export function readBenchSettings(argv: string[], env: Record<string, string | undefined>): BenchSettings | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(Object.keys(OPTIONS).map((name) => [name, { type: 'string' as const }])),
    },
  })
  if (values.help) return 'help'
  const settings = { ...DEFAULT_SETTINGS }
  for (const [name, { env: variable, key }] of Object.entries(OPTIONS)) {
    const raw = (values as Record<string, unknown>)[name] ?? env[variable]
    if (raw !== undefined && raw !== '') settings[key] = wholeNumber(String(raw), `--${name} / ${variable}`, key === 'warmupSeconds' ? 0 : 1)
  }
  return settings
}

function wholeNumber(raw: string, name: string, minimum: number): number {
  const value = Number(raw)
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be a whole number >= ${minimum}, got ${raw}`)
  return value
}

export interface BenchOptions<N extends string> {
  /** --profile was given. */
  profile: boolean
  /** Option `name` as a whole number >= `minimum`, `fallback` when it was not given; throws with the usage otherwise. */
  whole(name: N, fallback: number, minimum?: number): number
}

/**
 * The command line of a bench whose options are whole numbers (`names`) and --profile. Undefined after
 * printing `usage` for --help.
 */
export function readBenchOptions<N extends string>(names: readonly N[], usage: string): BenchOptions<N> | undefined {
  const options: ParseArgsOptionsConfig = {
    ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }
  const { values } = parseArgs({ options })
  if (values.help) {
    process.stdout.write(usage)
    return undefined
  }
  return {
    profile: values.profile === true,
    whole(name, fallback, minimum = 1) {
      const raw = values[name] as string | undefined
      if (raw === undefined) return fallback
      const value = Number(raw)
      if (!Number.isInteger(value) || value < minimum) throw new Error(`--${name} must be a whole number >= ${minimum}, got ${raw}\n${usage}`)
      return value
    },
  }
}
