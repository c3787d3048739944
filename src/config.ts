import envSchema from 'env-schema'
import { Type, type Static } from 'typebox'

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
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  JWT_ISSUER: Type.String({ minLength: 1, default: 'subscription-billing' }),
  SMTP_FROM: Type.String({ minLength: 3, default: 'Subscriptions <no-reply@localhost>' }),
  MAGIC_LINK_MAX_PER_EMAIL: Type.Integer({ minimum: 1, default: 5 }),
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
  STOREFRONT_CACHE_TTL_MS: Type.Integer({ minimum: 0, default: 5_000 }),
  RESPONSE_VALIDATION: Type.Optional(Type.Boolean()),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Boolean({ default: false }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
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
  /** Sign-in link requests allowed per email and per client address in each window. */
  magicLinkLimits: { perEmail: number; perAddress: number; windowMs: number }
  logLevel: string
  bootstrap: { storeHash: string; adminApiKey: string; mode: 'test' | 'live' } | undefined
  seedDemoData: boolean
  rateLimit: { max: number; windowMs: number }
  storefrontCacheTtlMs: number
  /** Validates every response against its route schema (on under NODE_ENV=test; costs throughput). */
  responseValidation: boolean
  webhookAllowPrivateNetworks: boolean
  shutdownTimeoutMs: number
}

/** Reads and validates the environment once; throws naming the offending variable. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Readonly<Config> {
  const data = Object.fromEntries(Object.entries(source).filter(([key, value]) => key in Env.properties && value !== ''))
  const env = envSchema<Env>({ schema: Env, data, env: false })
  if ((env.BOOTSTRAP_STORE_HASH === undefined) !== (env.BOOTSTRAP_ADMIN_API_KEY === undefined)) {
    throw new Error('BOOTSTRAP_STORE_HASH and BOOTSTRAP_ADMIN_API_KEY must be set together')
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
    magicLinkLimits: { perEmail: env.MAGIC_LINK_MAX_PER_EMAIL, perAddress: env.MAGIC_LINK_MAX_PER_ADDRESS, windowMs: env.MAGIC_LINK_WINDOW_MS },
    logLevel: env.LOG_LEVEL,
    bootstrap: env.BOOTSTRAP_STORE_HASH && env.BOOTSTRAP_ADMIN_API_KEY
      ? { storeHash: env.BOOTSTRAP_STORE_HASH, adminApiKey: env.BOOTSTRAP_ADMIN_API_KEY, mode: env.BOOTSTRAP_STORE_MODE }
      : undefined,
    seedDemoData: env.SEED_DEMO_DATA ?? env.DATABASE_URL === undefined,
    rateLimit: { max: env.RATE_LIMIT_MAX, windowMs: env.RATE_LIMIT_WINDOW_MS },
    storefrontCacheTtlMs: env.STOREFRONT_CACHE_TTL_MS,
    responseValidation: env.RESPONSE_VALIDATION ?? env.NODE_ENV === 'test',
    webhookAllowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
  })
}
