import type { MigrationResultSet } from 'kysely/migration'
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util'
import { loadConfig, type Config } from './config.ts'
import { connectDatabase, type DatabaseHandle } from './db/connect.ts'
import type { AdminApiKeyRow, Db, StoreMode, StoreRow } from './db/database.ts'
import { migrateToLatest } from './db/migrate.ts'
import { ensureDemoData } from './demo/demo-data.ts'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import pino from 'pino'
import { COMMAND_LINE } from './http/actors.ts'
import { AppError, notFound } from './lib/errors.ts'
import { createServices } from './services.ts'
import { toRfc3339, toRfc3339OrNull } from './lib/time.ts'
import { createAdminKey, createStore, findStoreByHash, listAdminKeys, listStores, presentStore, revokeAdminKey } from './modules/stores/index.ts'

type Values = Record<string, string | boolean | undefined>

interface Output {
  text: string
  json: unknown
  /** Written to stderr in both modes, so that `--json` output on stdout stays parseable. */
  warning?: string
  /** Non-zero: the command ran and reported, but what it did failed (an import that stopped). */
  exitCode?: number
}

interface Context {
  db: Db
  database: DatabaseHandle
  io: CliIo
  config: Readonly<Config>
  migrations: MigrationResultSet
  values: Values
  args: string[]
}

interface Command {
  usage: string
  summary: string
  options?: ParseArgsOptionsConfig
  /** Names of the positional arguments after the command words. */
  args?: string[]
  /** Rejects a wrong call before the database is opened; throws UsageError. */
  check?(values: Values): void
  run(context: Context): Promise<Output>
}

/** A mistake in how the CLI was called (exit 2), as opposed to a refusal by the domain (exit 1). */
class UsageError extends Error {}

const GLOBAL_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} satisfies ParseArgsOptionsConfig

// The same rule the server applies to BOOTSTRAP_STORE_HASH.
const STORE_HASH = /^[A-Za-z0-9_-]{1,64}$/
const ONCE_WARNING = 'The admin API key is shown only once: store it now. The database keeps only its hash.'

const commands: Record<string, Command> = {
  migrate: {
    usage: 'migrate',
    summary: 'bring the database schema up to date and list the migrations that ran',
    run: migrate,
  },
  'store create': {
    usage: 'store create --hash <store_hash> [--name N] [--mode test|live] [--timezone Z] [--currency C] [--no-key]',
    summary: 'create a store and, unless --no-key, its first admin API key',
    options: {
      hash: { type: 'string' },
      name: { type: 'string' },
      mode: { type: 'string' },
      timezone: { type: 'string' },
      currency: { type: 'string' },
      'no-key': { type: 'boolean' },
    },
    check: checkStoreCreate,
    run: storeCreate,
  },
  'store list': {
    usage: 'store list',
    summary: 'list stores',
    run: storeList,
  },
  'key create': {
    usage: 'key create --store <store_hash> [--name N]',
    summary: 'create an admin API key for a store (shown once)',
    options: { store: { type: 'string' }, name: { type: 'string' } },
    check: (values) => void requireOption(values, 'store'),
    run: keyCreate,
  },
  'key list': {
    usage: 'key list --store <store_hash>',
    summary: "list a store's admin API keys (never the keys themselves)",
    options: { store: { type: 'string' } },
    check: (values) => void requireOption(values, 'store'),
    run: keyList,
  },
  'key revoke': {
    usage: 'key revoke <key_id>',
    summary: 'revoke an admin API key',
    args: ['key_id'],
    run: keyRevoke,
  },
  import: {
    usage: 'import <file> --store <store_hash> --format recharge|native [--dry-run]',
    summary: 'import subscriptions from a CSV file (see docs/contract.md, Import); prints a progress bar on stderr, then the report',
    args: ['file'],
    options: { store: { type: 'string' }, format: { type: 'string' }, 'dry-run': { type: 'boolean' } },
    check: (values) => {
      requireOption(values, 'store')
      if (values.format !== 'recharge' && values.format !== 'native') throw new UsageError('--format must be recharge or native')
    },
    run: importFile,
  },
  demo: {
    usage: 'demo',
    summary: 'load the demo store and catalogue (not in production); print its store hash and a new admin key',
    run: demo,
  },
}

async function migrate({ migrations }: Context): Promise<Output> {
  const ran = (migrations.results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName)
  const text = ran.length ? ran.map((name) => `migrated ${name}`).join('\n') : 'The database schema is up to date; no migrations ran.'
  return { text, json: { ran } }
}

function checkStoreCreate(values: Values): void {
  if (!STORE_HASH.test(requireOption(values, 'hash'))) throw new UsageError('--hash must be 1-64 letters, digits, "_" or "-"')
  if (values.mode !== undefined && values.mode !== 'test' && values.mode !== 'live') throw new UsageError('--mode must be test or live')
}

async function storeCreate({ db, values }: Context): Promise<Output> {
  const { store, key } = await db.transaction().execute(async (trx) => {
    const store = await createStore(trx, {
      storeHash: values.hash as string,
      mode: (values.mode ?? 'test') as StoreMode,
      ...optional(values, 'name', 'timezone', 'currency'),
    })
    return { store, key: values['no-key'] ? null : await createAdminKey(trx, store) }
  })
  const text = [`Created store ${store.store_hash} (${store.id})`, storeDetails(store)]
  if (key) text.push('', `Admin API key ${key.id}:`, `  ${key.key}`)
  return {
    text: text.join('\n'),
    json: { store: presentStore(store), admin_key: key },
    ...(key ? { warning: ONCE_WARNING } : {}),
  }
}

async function storeList({ db }: Context): Promise<Output> {
  const stores = await listStores(db)
  const text = stores.length ? table(['ID', 'STORE HASH', 'MODE', 'NAME'], stores.map((s) => [s.id, s.store_hash, s.mode, s.name])) : 'No stores.'
  return { text, json: { stores: stores.map(presentStore) } }
}

async function keyCreate({ db, values }: Context): Promise<Output> {
  const store = await storeByHash(db, requireOption(values, 'store'))
  const name = (values.name as string | undefined) ?? 'default'
  const key = await createAdminKey(db, store, name)
  return {
    text: `Admin API key ${key.id} for store ${store.store_hash}:\n  ${key.key}`,
    json: { store_hash: store.store_hash, id: key.id, name, key: key.key },
    warning: ONCE_WARNING,
  }
}

async function keyList({ db, values }: Context): Promise<Output> {
  const store = await storeByHash(db, requireOption(values, 'store'))
  const keys = (await listAdminKeys(db, store.id)).map(presentKey)
  const text = keys.length
    ? table(
        ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'],
        keys.map((k) => [k.id, k.name, k.key_prefix, k.created_at, k.last_used_at ?? '-', k.revoked_at ?? '-']),
      )
    : `Store ${store.store_hash} has no admin API keys.`
  return { text, json: { store_hash: store.store_hash, keys } }
}

async function keyRevoke({ db, args }: Context): Promise<Output> {
  const keyId = args[0]!
  await revokeAdminKey(db, keyId, new Date())
  return { text: `Revoked admin API key ${keyId}.`, json: { id: keyId, revoked: true } }
}

async function importFile({ database, config, values, args, io }: Context): Promise<Output> {
  const store = await storeByHash(database.db, requireOption(values, 'store'))
  const file = args[0]!
  const size = await stat(file).then((s) => s.size, () => {
    throw new AppError('not_found', `cannot read ${file}`)
  })
  // The whole service, as the server builds it: rows are written, and events recorded, exactly as through the API.
  const services = createServices({ database, config, log: pino({ level: 'warn' }, pino.destination(2)) })
  try {
    const bar = progressBar(io)
    const report = await services.modules.imports.service.run(store, createReadStream(file), {
      format: values.format as 'recharge' | 'native',
      dryRun: values['dry-run'] === true,
      actor: COMMAND_LINE,
      bytesTotal: size,
      onProgress: bar.update,
    })
    bar.done(report)
    const text = [
      `${report.dry_run ? 'Dry run of' : 'Imported'} ${file} into ${store.store_hash}: ${report.status}`,
      `  rows ${report.rows}  created ${report.created}${report.dry_run ? ' (would be)' : ''}  skipped ${report.skipped} (already imported)  refused ${report.failed}`,
      ...(report.ignored_columns.length ? [`  columns not read: ${report.ignored_columns.join(', ')}`] : []),
      ...report.errors.slice(0, 50).map((e) => `  row ${e.row}${e.column ? ` ${e.column}` : ''}: ${e.code}: ${e.detail}`),
      ...(report.errors.length > 50 ? [`  ... ${report.errors.length - 50} more (--json lists them all, up to 1,000)`] : []),
      `  report: GET /api/v1/admin/imports/${report.id}`,
    ]
    // A file that stopped being readable exits 1 (after the report): `import && switch billing on` must not carry on.
    if (report.status === 'failed') return { text: text.join('\n'), json: report, exitCode: 1 }
    return { text: text.join('\n'), json: report }
  } finally {
    await services.close()
  }
}

/** A one-line bar on stderr, redrawn after each batch (stdout stays the report, parseable with --json). */
function progressBar(io: CliIo) {
  const draw = (fraction: number, rows: number) => {
    const width = 30
    const filled = Math.round(fraction * width)
    io.stderr(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${rows} rows`)
  }
  return {
    update: (view: { progress: number | null; rows: number }) => draw(view.progress ?? 0, view.rows),
    done: (view: { rows: number }) => {
      draw(1, view.rows)
      io.stderr('\n')
    },
  }
}

async function demo({ db, config }: Context): Promise<Output> {
  if (config.env === 'production') throw new AppError('invalid_state', 'the demo store is for local runs, never with NODE_ENV=production')
  // Asked for explicitly: a demo store that exists already gets another key, since its first was shown once.
  const data = (await ensureDemoData(db, { newKey: true }))!
  return {
    text: [
      `${data.created ? 'Created' : 'Found'} demo store ${data.storeHash} (test mode)`,
      `  Demo admin key       ${data.adminKey}`,
      `  Demo product id      ${data.platformProductId}`,
    ].join('\n'),
    json: { store_hash: data.storeHash, admin_key: data.adminKey, platform_product_id: data.platformProductId, created: data.created },
    warning: ONCE_WARNING,
  }
}

function presentKey(key: AdminApiKeyRow) {
  return {
    id: key.id,
    name: key.name,
    key_prefix: key.key_prefix,
    created_at: toRfc3339(key.created_at),
    last_used_at: toRfc3339OrNull(key.last_used_at),
    revoked_at: toRfc3339OrNull(key.revoked_at),
  }
}

function storeDetails(store: StoreRow): string {
  return [`  name      ${store.name}`, `  mode      ${store.mode}`, `  timezone  ${store.timezone}`, `  currency  ${store.currency}`].join('\n')
}

async function storeByHash(db: Db, storeHash: string): Promise<StoreRow> {
  const store = await findStoreByHash(db, storeHash)
  if (!store) throw notFound('store', storeHash)
  return store
}

function requireOption(values: Values, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

function optional(values: Values, ...names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (typeof values[name] === 'string' ? [[name, values[name]]] : [])))
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)))
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}

function helpOutput(): Output {
  const entries = [...Object.values(commands), { usage: 'help', summary: 'show this text' }]
  const text = [
    'Usage: npm run cli -- <command> [options] [--json]',
    '',
    'Commands:',
    ...entries.map((entry) => `  ${entry.usage}\n      ${entry.summary}`),
    '',
    'Every command takes --json for machine-readable output on stdout.',
    'The database is the server\'s: DATABASE_URL, or the embedded one under DATA_DIR (default ./data),',
    'which cannot be opened while the server runs on it.',
    'Exit codes: 0 done, 1 refused or failed, 2 wrong usage.',
  ].join('\n')
  return { text, json: { commands: entries.map(({ usage, summary }) => ({ usage, summary })) } }
}

function resolveCommand(words: string[]): { command: Command; args: string[] } {
  for (const length of [2, 1]) {
    const command = commands[words.slice(0, length).join(' ')]
    if (command && words.length >= length) return { command, args: words.slice(length) }
  }
  const related = Object.keys(commands).filter((name) => name.startsWith(`${words[0]} `))
  const hint = related.length ? `; try ${related.join(', ')}` : ''
  throw new UsageError(`unknown command "${words.slice(0, 2).join(' ')}"${hint}`)
}

/** Where a run of the CLI reads its configuration and writes its output: the process's own by default. */
export interface CliIo {
  env: Record<string, string | undefined>
  stdout(text: string): void
  stderr(text: string): void
  /** An open database to run on instead of the configured one (the tests' in-process runs); left open. */
  database?: DatabaseHandle
}

const processIo: CliIo = {
  env: process.env,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
}

/** Runs one command line; returns the exit code (0 done, 1 refused by the domain, 2 called wrongly). */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  // A lenient first pass only to find the command words; the command's own options are then checked strictly.
  const allOptions = Object.assign({}, GLOBAL_OPTIONS, ...Object.values(commands).map((command) => command.options ?? {}))
  const loose = parseArgs({ args: argv, options: allOptions, strict: false, allowPositionals: true })
  const json = loose.values.json === true
  try {
    if (loose.values.help || loose.positionals.length === 0 || loose.positionals[0] === 'help') {
      write(io, helpOutput(), json)
      return 0
    }
    const { command } = resolveCommand(loose.positionals)
    const parsed = parseArgs({ args: argv, options: { ...GLOBAL_OPTIONS, ...command.options }, strict: true, allowPositionals: true })
    const { args } = resolveCommand(parsed.positionals)
    if (args.length !== (command.args ?? []).length) throw new UsageError(`usage: npm run cli -- ${command.usage}`)
    command.check?.(parsed.values as Values)
    const config = loadConfig(io.env)
    const database = io.database ?? (await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }))
    try {
      const migrations = await migrateToLatest(database.db)
      const output = await command.run({ db: database.db, database, io, config, migrations, values: parsed.values as Values, args })
      write(io, output, json)
      return output.exitCode ?? 0
    } finally {
      if (!io.database) await database.close()
    }
  } catch (error) {
    return report(io, error)
  }
}

function write(io: CliIo, output: Output, json: boolean): void {
  io.stdout(json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`)
  if (output.warning) io.stderr(`${output.warning}\n`)
}

function report(io: CliIo, error: unknown): number {
  const usage = error instanceof UsageError || String((error as NodeJS.ErrnoException)?.code).startsWith('ERR_PARSE_ARGS')
  if (usage) {
    io.stderr(`error: ${(error as Error).message}\nRun "npm run cli -- help" for usage.\n`)
    return 2
  }
  if (error instanceof AppError && error.errors) {
    // Domain validation names body fields (`/timezone`); here they came from the flags of the same name.
    const problems = error.errors.map((field) => `--${field.path.split('/').pop()} ${field.message}`)
    io.stderr(`error: ${problems.join('; ')}\n`)
    return 1
  }
  io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`)
  return 1
}

if (import.meta.main) process.exitCode = await runCli(process.argv.slice(2))
