import envSchema from 'env-schema'
import ipaddr from 'ipaddr.js'
import { Type, type Static } from 'typebox'
import { parseDurations } from './lib/durations.ts'
import type { BillingSettings } from './modules/billing/index.ts'

const Env = Type.Object({
  NODE_ENV: Type.String({ default: 'development' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ default: './data' }),
  ROLE: Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('worker')], { default: 'all' }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  PORTAL_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  SMTP_REQUIRE_TLS: Type.Boolean({ default: false }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  JWT_ISSUER: Type.String({ minLength: 1, default: 'subscription-billing' }),
  SMTP_FROM: Type.String({ minLength: 3, default: 'Subscriptions <no-reply@localhost>' }),
  MAGIC_LINK_MAX_PER_EMAIL: Type.Integer({ minimum: 1, default: 5 }),
  MAGIC_LINK_MAX_PER_EMAIL_TOTAL: Type.Integer({ minimum: 1, default: 20 }),
  MAGIC_LINK_MAX_PER_ADDRESS: Type.Integer({ minimum: 1, default: 30 }),
  MAGIC_LINK_WINDOW_MS: Type.Integer({ minimum: 1000, default: 900_000 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BOOTSTRAP_STORE_HASH: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' })),
  BOOTSTRAP_ADMIN_API_KEY: Type.Optional(Type.String({ minLength: 24, maxLength: 200 })),
  BOOTSTRAP_STORE_MODE: Type.Union([Type.Literal('test'), Type.Literal('live')], { default: 'test' }),
  SEED_DEMO_DATA: Type.Optional(Type.Boolean()),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 1200 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' })),
  STOREFRONT_CACHE_TTL_MS: Type.Integer({ minimum: 0, default: 5_000 }),
  RESPONSE_VALIDATION: Type.Optional(Type.Boolean()),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Boolean({ default: false }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  PLATFORM_API_URL: Type.String({ pattern: '^https?://', default: 'https://api.bigcommerce.com' }),
  PLATFORM_PAYMENTS_URL: Type.String({ pattern: '^https?://', default: 'https://payments.bigcommerce.com' }),
  PLATFORM_LOGIN_URL: Type.String({ pattern: '^https?://', default: 'https://login.bigcommerce.com' }),
  PLATFORM_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  PLATFORM_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  PLATFORM_TOKEN_KEY: Type.Optional(Type.String({ minLength: 1 })),
  PLATFORM_API_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15_000 }),
  TEST_GATEWAY_LATENCY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 0 }),
  BILLING_CHARGE_LEASE_MS: Type.Integer({ minimum: 100, default: 60_000 }),
  BILLING_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 64 }),
  // A batch's statements bind about 25 parameters per renewal; PostgreSQL takes at most 65,535.
  BILLING_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 200 }),
  BILLING_UNKNOWN_GRACE_MS: Type.Integer({ minimum: 1_000, maximum: 30 * 24 * 3_600_000, default: 24 * 3_600_000 }),
  JOB_LEASE_MS: Type.Integer({ minimum: 500, default: 60_000 }),
  WEB_DIST_DIR: Type.Optional(Type.String({ minLength: 1 })),
  WEBHOOK_RETRY_SCHEDULE: Type.Optional(Type.String({ minLength: 1 })),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 15_000 }),
  WEBHOOK_DISABLE_AFTER_MS: Type.Integer({ minimum: 1_000, default: 5 * 24 * 3_600_000 }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1_000, default: 64 }),
  WEBHOOK_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 5_000, default: 200 }),
})
type Env = Static<typeof Env>

export interface Config {
  env: string
  port: number
  host: string
  /** PostgreSQL connection string; absent means the embedded database under dataDir. */
  databaseUrl: string | undefined
  dataDir: string
  role: 'all' | 'api' | 'worker'
  publicUrl: string | undefined
  portalUrl: string | undefined
  smtpUrl: string | undefined
  /** Signs portal sessions; absent, one is generated once and kept (DATA_DIR or the database). */
  jwtSecret: string | undefined
  jwtIssuer: string
  smtpFrom: string
  /**
   * Sign-in link requests allowed in each window: per email from one client address (more is 429),
   * per email from all addresses together (more is answered alike but sends nothing), per client address.
   */
  magicLinkLimits: { perEmail: number; perEmailTotal: number; perAddress: number; windowMs: number }
  logLevel: string
  bootstrap: { storeHash: string; adminApiKey: string; mode: 'test' | 'live' } | undefined
  /** Sends mail only after STARTTLS (SMTP_REQUIRE_TLS): a server that offers none is refused. */
  smtpRequireTls: boolean
  /**
   * Demo store and catalogue: `always` (SEED_DEMO_DATA=true), `when-created` (the default for the
   * embedded database outside production: only when this start created the database), `never`.
   */
  seedDemoData: 'always' | 'when-created' | 'never'
  rateLimit: { max: number; windowMs: number }
  /** Which proxies' X-Forwarded-For is believed for the client address (Fastify's trustProxy); false: none. */
  trustProxy: TrustProxy
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>`. */
  metricsToken: string | undefined
  storefrontCacheTtlMs: number
  /** Validates every response against its route schema (on under NODE_ENV=test; costs throughput). */
  responseValidation: boolean
  webhookAllowPrivateNetworks: boolean
  shutdownTimeoutMs: number
  /** Where the built portal and widget are served from (`npm run build:web` writes dist/web). */
  webDistDir: string | undefined
  webhooks: {
    /** Delays between attempts after a failure (WEBHOOK_RETRY_SCHEDULE, e.g. "5s,5m,30m"); undefined: the webhooks module's default. */
    retrySchedule: readonly number[] | undefined
    timeoutMs: number
    /** An endpoint failing without a success for this long is disabled. */
    disableAfterMs: number
    concurrency: number
    batchSize: number
  }
  /** How long a worker owns a claimed job; a worker that dies lets its jobs go when the lease ends. */
  jobLeaseMs: number
  /** The BigCommerce app and its hosts (docs/bigcommerce.md). */
  platform: {
    /** PLATFORM_LOGIN_URL: where an app install's code is exchanged for the store's token. */
    loginUrl: string
    /** The app's OAuth client (PLATFORM_CLIENT_ID and PLATFORM_CLIENT_SECRET); undefined: the app routes answer 503. */
    app: { clientId: string; clientSecret: string } | undefined
    /** PLATFORM_TOKEN_KEY: the 32-byte key that encrypts stores' access tokens; undefined: one is generated once and kept. */
    tokenKey: Buffer | undefined
  }
  /** The billing module's settings (src/modules/billing). */
  billing: BillingSettings
}

/**
 * A lease long enough for a charge's usual gateway calls one after another (on the platform: the
 * payment method, the payment access token, the payment, a reconciliation; on the test gateway, a
 * charge and a replay under the same key). Safety does not rest on it: the engine renews leases
 * while calls run, a platform order is kept only while the lease is held, and a payment goes out
 * only after the lease-checked submission mark, so a charge taken over is only ever looked up.
 */
export const PLATFORM_CALLS_PER_CHARGE = 4
export function longestGatewaySequenceMs(billing: { platformTimeoutMs: number; testGatewayLatencyMs: number }): number {
  return Math.max(PLATFORM_CALLS_PER_CHARGE * billing.platformTimeoutMs, 2 * billing.testGatewayLatencyMs)
}

/** Off, a hop count, or the proxies' addresses, CIDR ranges and proxy-addr's names for address ranges. */
export type TrustProxy = false | number | string[]

const TRUSTED_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

function isProxyAddress(entry: string): boolean {
  if (TRUSTED_RANGE_NAMES.has(entry)) return true
  const slash = entry.indexOf('/')
  if (slash === -1) return ipaddr.IPv4.isValidFourPartDecimal(entry) || ipaddr.IPv6.isValid(entry)
  const address = entry.slice(0, slash)
  if (!ipaddr.IPv4.isValidFourPartDecimal(address) && !ipaddr.IPv6.isValid(address)) return false
  return ipaddr.isValidCIDR(entry)
}

/**
 * TRUST_PROXY: unset, 0 or false trusts no proxy (X-Forwarded-For is ignored); a whole number trusts
 * that many hops in front of the service; otherwise a comma-separated list of the proxies' addresses
 * and CIDR ranges. "true" is refused: trusting every hop lets any client name its own address.
 */
function parseTrustProxy(text: string | undefined): TrustProxy {
  if (text === undefined) return false
  const value = text.trim()
  if (value === '0' || value === 'false') return false
  if (/^[0-9]+$/.test(value)) return Number(value)
  const entries = value.split(',').map((entry) => entry.trim())
  for (const entry of entries) {
    if (!isProxyAddress(entry)) {
      throw new Error(
        `TRUST_PROXY: ${JSON.stringify(entry)} is neither a hop count nor an address or CIDR range; ` +
          'give the number of proxies in front of the service (e.g. 1) or their addresses, comma-separated (e.g. 10.0.0.0/8,192.0.2.7)',
      )
    }
  }
  return entries
}

function parseSchedule(text: string): number[] {
  try {
    return parseDurations(text)
  } catch (error) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE: ${(error as Error).message}`)
  }
}

/** PLATFORM_TOKEN_KEY: 32 bytes, written as 64 hex digits or in base64 (standard or URL-safe). */
function parseTokenKey(text: string | undefined): Buffer | undefined {
  if (text === undefined) return undefined
  const value = text.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(value)
    ? Buffer.from(value, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)
      ? Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : undefined
  // Never echo the value: it is a key.
  if (key?.length !== 32) throw new Error('PLATFORM_TOKEN_KEY must be 32 bytes, as 64 hex digits or in base64 (e.g. openssl rand -base64 32)')
  return key
}

/** Reads and validates the environment once; throws naming the offending variable. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Readonly<Config> {
  const data = Object.fromEntries(Object.entries(source).filter(([key, value]) => key in Env.properties && value !== ''))
  const env = envSchema<Env>({ schema: Env, data, env: false })
  if ((env.BOOTSTRAP_STORE_HASH === undefined) !== (env.BOOTSTRAP_ADMIN_API_KEY === undefined)) {
    throw new Error('BOOTSTRAP_STORE_HASH and BOOTSTRAP_ADMIN_API_KEY must be set together')
  }
  if (source.PLATFORM_CREDENTIALS !== undefined && source.PLATFORM_CREDENTIALS !== '') {
    throw new Error('PLATFORM_CREDENTIALS is no longer read: connect each store through the BigCommerce app install or PUT /api/v1/admin/platform-connection (docs/bigcommerce.md), then unset it')
  }
  if ((env.PLATFORM_CLIENT_ID === undefined) !== (env.PLATFORM_CLIENT_SECRET === undefined)) {
    throw new Error('PLATFORM_CLIENT_ID and PLATFORM_CLIENT_SECRET must be set together')
  }
  const production = env.NODE_ENV === 'production'
  // Without SMTP_URL sign-in links are written to the log, and whoever reads the log can sign in as
  // any subscriber: fine on a developer's machine, never for real subscribers. (A live store already
  // in the database is checked at start, src/modules/portal-auth/mailer.ts.)
  if (env.SMTP_URL === undefined && (production || env.BOOTSTRAP_STORE_MODE === 'live')) {
    throw new Error(`SMTP_URL is required ${production ? 'with NODE_ENV=production' : 'for a live store (BOOTSTRAP_STORE_MODE=live)'}: without it sign-in links would be written to the log instead of sent`)
  }
  if (production && env.SEED_DEMO_DATA === true) {
    throw new Error('SEED_DEMO_DATA=true is not allowed with NODE_ENV=production: the demo store and its admin key are for local runs')
  }
  const longest = longestGatewaySequenceMs({ platformTimeoutMs: env.PLATFORM_API_TIMEOUT_MS, testGatewayLatencyMs: env.TEST_GATEWAY_LATENCY_MS })
  if (env.BILLING_CHARGE_LEASE_MS < longest) {
    throw new Error(`BILLING_CHARGE_LEASE_MS (${env.BILLING_CHARGE_LEASE_MS}) must be at least the longest gateway sequence, ${longest} ms (${PLATFORM_CALLS_PER_CHARGE} x PLATFORM_API_TIMEOUT_MS, 2 x TEST_GATEWAY_LATENCY_MS)`)
  }
  return Object.freeze({
    env: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    role: env.ROLE,
    publicUrl: env.PUBLIC_URL,
    portalUrl: env.PORTAL_URL,
    smtpUrl: env.SMTP_URL,
    jwtSecret: env.JWT_SECRET,
    jwtIssuer: env.JWT_ISSUER,
    smtpFrom: env.SMTP_FROM,
    magicLinkLimits: {
      perEmail: env.MAGIC_LINK_MAX_PER_EMAIL,
      perEmailTotal: env.MAGIC_LINK_MAX_PER_EMAIL_TOTAL,
      perAddress: env.MAGIC_LINK_MAX_PER_ADDRESS,
      windowMs: env.MAGIC_LINK_WINDOW_MS,
    },
    logLevel: env.LOG_LEVEL,
    bootstrap: env.BOOTSTRAP_STORE_HASH && env.BOOTSTRAP_ADMIN_API_KEY
      ? { storeHash: env.BOOTSTRAP_STORE_HASH, adminApiKey: env.BOOTSTRAP_ADMIN_API_KEY, mode: env.BOOTSTRAP_STORE_MODE }
      : undefined,
    smtpRequireTls: env.SMTP_REQUIRE_TLS,
    seedDemoData: env.SEED_DEMO_DATA === true ? 'always' : env.SEED_DEMO_DATA === false || production || env.DATABASE_URL !== undefined ? 'never' : 'when-created',
    rateLimit: { max: env.RATE_LIMIT_MAX, windowMs: env.RATE_LIMIT_WINDOW_MS },
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    metricsToken: env.METRICS_TOKEN,
    storefrontCacheTtlMs: env.STOREFRONT_CACHE_TTL_MS,
    responseValidation: env.RESPONSE_VALIDATION ?? env.NODE_ENV === 'test',
    webhookAllowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    jobLeaseMs: env.JOB_LEASE_MS,
    webDistDir: env.WEB_DIST_DIR,
    webhooks: {
      retrySchedule: env.WEBHOOK_RETRY_SCHEDULE === undefined ? undefined : Object.freeze(parseSchedule(env.WEBHOOK_RETRY_SCHEDULE)),
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      disableAfterMs: env.WEBHOOK_DISABLE_AFTER_MS,
      concurrency: env.WEBHOOK_CONCURRENCY,
      batchSize: env.WEBHOOK_BATCH_SIZE,
    },
    platform: {
      loginUrl: env.PLATFORM_LOGIN_URL,
      app: env.PLATFORM_CLIENT_ID && env.PLATFORM_CLIENT_SECRET ? { clientId: env.PLATFORM_CLIENT_ID, clientSecret: env.PLATFORM_CLIENT_SECRET } : undefined,
      tokenKey: parseTokenKey(env.PLATFORM_TOKEN_KEY),
    },
    billing: {
      platformApiUrl: env.PLATFORM_API_URL,
      platformPaymentsUrl: env.PLATFORM_PAYMENTS_URL,
      platformTimeoutMs: env.PLATFORM_API_TIMEOUT_MS,
      testGatewayLatencyMs: env.TEST_GATEWAY_LATENCY_MS,
      chargeLeaseMs: env.BILLING_CHARGE_LEASE_MS,
      concurrency: env.BILLING_CONCURRENCY,
      batchSize: env.BILLING_BATCH_SIZE,
      unknownGraceMs: env.BILLING_UNKNOWN_GRACE_MS,
    },
  })
}
