/**
 * Customers and stored instruments (§6), webhooks registration and delivery (§7), OAuth token
 * exchange on the login host (§1.2). "§n" refers to docs/platform-api.md.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto'
import type { Ctx, Reply, SimCore } from './context.ts'
import { FieldErrors, Refusal, isObject, pageParams, pagination, parseJson, pick, requireJsonContentType } from './http.ts'
import { instrumentView, type SimCustomer, type SimHook, type SimStore } from './state.ts'

// ---------------------------------------------------------------------------------------------
// Customers (§6)
// ---------------------------------------------------------------------------------------------

function renderCustomer(c: SimCustomer): Record<string, unknown> {
  return {
    id: c.id,
    email: c.email,
    first_name: c.first_name,
    last_name: c.last_name,
    company: c.company,
    phone: c.phone,
    customer_group_id: c.customer_group_id,
    notes: '',
    tax_exempt_category: '',
    registration_ip_address: '',
    date_created: c.date_created.toISOString(),
    date_modified: c.date_created.toISOString(),
    accepts_product_review_abandoned_cart_emails: false,
    channel_ids: [1],
  }
}

/** GET /v3/customers?id:in= (§6.1): {data, meta}; unknown ids give an empty data. */
export function getCustomers(ctx: Ctx): Reply {
  const { page, limit } = pageParams(ctx.query, 422)
  let customers = [...ctx.store.customers.values()]
  const ids = ctx.query.get('id:in')
  if (ids !== null) {
    const parts = ids.split(',')
    // An invalid filter is a 422 {status, title, type, errors} (§6.1).
    if (parts.some((p) => !/^\d+$/.test(p.trim()))) throw new Refusal(422, 'body', 'id:in must be a comma-separated list of integers', { errors: { 'id:in': 'must be integers' } })
    const wanted = new Set(parts.map((p) => Number(p)))
    customers = customers.filter((c) => wanted.has(c.id))
  }
  const emails = ctx.query.get('email:in')
  if (emails !== null) {
    const wanted = new Set(emails.split(',').map((e) => e.trim().toLowerCase()))
    customers = customers.filter((c) => wanted.has(c.email.toLowerCase()))
  }
  customers.sort((a, b) => a.id - b.id)
  return { status: 200, body: { data: pick(customers, page, limit).map(renderCustomer), meta: pagination(customers.length, page, limit) } }
}

/**
 * GET /v3/customers/{id}/stored-instruments (§6.3): a bare array. An unknown customer is not in the
 * reference; the simulator answers 404 in the v3 shape (simulator's reading).
 */
export function getStoredInstruments(ctx: Ctx): Reply {
  const id = Number(ctx.params.customerId)
  const customer = Number.isInteger(id) ? ctx.store.customers.get(id) : undefined
  if (!customer) throw new Refusal(404, 'state', `Customer ${ctx.params.customerId} not found`, { title: 'Customer not found' })
  const body = customer.instruments.map((i) => ({
    ...instrumentView(i),
    billing_address: {
      first_name: customer.first_name,
      last_name: customer.last_name,
      email: customer.email,
      company: '',
      address1: '1 Main Street',
      address2: '',
      city: 'Austin',
      postal_code: '78751',
      state_or_province: 'Texas',
      state_or_province_code: 'TX',
      country_code: 'US',
      phone: '',
    },
  }))
  return { status: 200, body }
}

// ---------------------------------------------------------------------------------------------
// Webhooks (§7)
// ---------------------------------------------------------------------------------------------

/** Scopes the simulator knows (WHE "Orders", HOOKS; §7.2), plus the customer ones the service may use. */
export const HOOK_SCOPES = new Set([
  'store/order/*',
  'store/order/created',
  'store/order/updated',
  'store/order/archived',
  'store/order/statusUpdated',
  'store/order/message/created',
  'store/order/refund/created',
  'store/order/transaction/created',
  'store/order/transaction/updated',
  'store/app/uninstalled',
  'store/customer/*',
  'store/customer/created',
  'store/customer/updated',
  'store/customer/deleted',
  'store/customer/payment/instrument/default/updated',
])

function renderHook(h: SimHook): Record<string, unknown> {
  const { created_by_token: _, ...rest } = h
  return rest
}

function checkHookBody(body: unknown, partial: boolean): { scope?: string; destination?: string; is_active?: boolean; headers?: Record<string, string> | null } {
  const errors = new FieldErrors()
  if (!isObject(body)) throw new Refusal(400, 'body', 'The request body must be a JSON object')
  for (const key of Object.keys(body)) if (!['scope', 'destination', 'is_active', 'headers', 'events_history_enabled'].includes(key)) errors.add(key, 'is not a field of a webhook')
  if (!partial || 'scope' in body) {
    if (typeof body.scope !== 'string') errors.add('scope', 'error.path.missing.')
    else if (!HOOK_SCOPES.has(body.scope)) errors.add('scope', `unknown scope ${body.scope}`)
  }
  if (!partial || 'destination' in body) {
    if (typeof body.destination !== 'string') errors.add('destination', 'error.path.missing.')
    else {
      // §7.1: https on port 443 only, no custom ports.
      let url: URL | undefined
      try {
        url = new URL(body.destination)
      } catch {
        errors.add('destination', 'must be an absolute URL')
      }
      if (url && (url.protocol !== 'https:' || (url.port !== '' && url.port !== '443'))) errors.add('destination', 'must be https on port 443 (no custom ports)')
    }
  }
  if ('is_active' in body && typeof body.is_active !== 'boolean') errors.add('is_active', 'must be a boolean')
  if ('headers' in body && body.headers !== null) {
    if (!isObject(body.headers) || Object.values(body.headers).some((v) => typeof v !== 'string')) errors.add('headers', 'must be an object of string values, or null')
  }
  // HOOKS createWebhooks: 422 {status, title, type, errors:{destination:"error.path.missing."}}.
  errors.throwIfAny(422)
  return body as ReturnType<typeof checkHookBody>
}

/** POST /v3/hooks (§7.1): 200 (not 201) {data: hook, meta}. */
export function createHook(ctx: Ctx): Reply {
  const body = checkHookBody(parseJson(ctx.rawBody), false)
  const token = ctx.token!
  const mine = ctx.store.hooks.filter((h) => h.client_id === token.client_id && h.scope === body.scope)
  // WHO "Platform limits": one hook per store + client + scope + destination; at most 10 per scope
  // (the status is not stated: 422, simulator's reading).
  if (mine.some((h) => h.destination === body.destination)) throw new Refusal(422, 'state', 'A webhook with this scope and destination already exists for this client', { errors: { destination: 'duplicate' } })
  if (mine.length >= 10) throw new Refusal(422, 'state', 'At most 10 webhooks per store, client and scope', { errors: { scope: 'limit reached' } })
  const now = Math.floor(ctx.core.now().getTime() / 1000)
  const hook: SimHook = {
    id: ctx.store.next.hook++,
    client_id: token.client_id,
    store_hash: ctx.store.hash,
    scope: body.scope!,
    destination: body.destination!,
    is_active: body.is_active ?? true,
    headers: body.headers ?? null,
    created_at: now,
    updated_at: now,
    created_by_token: token.token,
  }
  ctx.store.hooks.push(hook)
  return { status: 200, body: { data: renderHook(hook), meta: {} } }
}

/** GET /v3/hooks (§7.1): only the hooks of the token that made them (WHO troubleshooting). */
export function listHooks(ctx: Ctx): Reply {
  const { page, limit } = pageParams(ctx.query, 422)
  const scope = ctx.query.get('scope')
  const destination = ctx.query.get('destination')
  const active = ctx.query.get('is_active')
  if (active !== null && active !== 'true' && active !== 'false') throw new Refusal(422, 'body', 'is_active must be true or false')
  const hooks = ctx.store.hooks.filter(
    (h) =>
      h.created_by_token === ctx.token!.token &&
      (scope === null || h.scope === scope) &&
      (destination === null || h.destination === destination) &&
      (active === null || String(h.is_active) === active),
  )
  return { status: 200, body: { data: pick(hooks, page, limit).map(renderHook), meta: pagination(hooks.length, page, limit) } }
}

function hookOr404(ctx: Ctx): SimHook {
  const hook = ctx.store.hooks.find((h) => String(h.id) === ctx.params.hookId && h.created_by_token === ctx.token!.token)
  if (!hook) throw new Refusal(404, 'state', `Webhook ${ctx.params.hookId} not found`)
  return hook
}

/** PUT /v3/hooks/{id} (§7.1): 200 with the hook. */
export function updateHook(ctx: Ctx): Reply {
  const hook = hookOr404(ctx)
  const body = checkHookBody(parseJson(ctx.rawBody), true)
  if (body.scope !== undefined) hook.scope = body.scope
  if (body.destination !== undefined) hook.destination = body.destination
  if (body.is_active !== undefined) hook.is_active = body.is_active
  if (body.headers !== undefined) hook.headers = body.headers
  hook.updated_at = Math.floor(ctx.core.now().getTime() / 1000)
  return { status: 200, body: { data: renderHook(hook), meta: {} } }
}

/** DELETE /v3/hooks/{id} (§7.1): 200 with the hook. */
export function deleteHook(ctx: Ctx): Reply {
  const hook = hookOr404(ctx)
  ctx.store.hooks.splice(ctx.store.hooks.indexOf(hook), 1)
  return { status: 200, body: { data: renderHook(hook), meta: {} } }
}

export interface WebhookDelivery {
  hook_id: number
  /** Where it was actually sent (after `routeWebhooksTo`). */
  url: string
  headers: Record<string, string>
  payload: Record<string, unknown>
  body: string
  status: number | null
  error: string | null
}

function scopeMatches(hookScope: string, scope: string): boolean {
  if (hookScope === scope) return true
  return hookScope.endsWith('/*') && scope.startsWith(hookScope.slice(0, -1))
}

/**
 * Sends one callback to each active hook of the store whose scope matches: payload of §7.3
 * (`hash` = SHA-1 of the payload), the hook's custom headers (§7.5), and Standard Webhooks headers
 * signed with the app's client secret when `signingSecret` is given (§7.5; header names from the
 * Standard Webhooks spec, not BigCommerce's text).
 */
export async function deliver(
  store: SimStore,
  scope: string,
  data: Record<string, unknown>,
  opts: { origin: string | undefined; signingSecret: string | undefined; now: Date; timeoutMs: number },
): Promise<WebhookDelivery[]> {
  const createdAt = Math.floor(opts.now.getTime() / 1000)
  const base = { scope, store_id: store.store_id, data, created_at: createdAt, producer: `stores/${store.hash}` }
  const hash = createHash('sha1').update(JSON.stringify(base)).digest('hex')
  const payload = { scope, store_id: store.store_id, data, hash, created_at: createdAt, producer: `stores/${store.hash}` }
  const body = JSON.stringify(payload)
  const hooks = store.hooks.filter((h) => h.is_active && scopeMatches(h.scope, scope))
  return Promise.all(
    hooks.map(async (hook): Promise<WebhookDelivery> => {
      const target = new URL(hook.destination)
      const url = opts.origin ? new URL(target.pathname + target.search, opts.origin).toString() : target.toString()
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(hook.headers ?? {}) }
      if (opts.signingSecret !== undefined) {
        const id = `msg_${randomUUID()}`
        const ts = String(createdAt)
        const sig = createHmac('sha256', Buffer.from(opts.signingSecret, 'utf8')).update(`${id}.${ts}.${body}`).digest('base64')
        Object.assign(headers, { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` })
      }
      const delivery: WebhookDelivery = { hook_id: hook.id, url, headers, payload, body, status: null, error: null }
      // Loopback only: a registered https destination is never contacted for real.
      if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname)) {
        delivery.error = `not sent: ${url} is not a loopback address (call routeWebhooksTo(<local receiver origin>))`
        return delivery
      }
      try {
        const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(opts.timeoutMs) })
        await res.arrayBuffer()
        delivery.status = res.status
      } catch (err) {
        delivery.error = (err as Error).message
      }
      return delivery
    }),
  )
}

// ---------------------------------------------------------------------------------------------
// OAuth (§1.2)
// ---------------------------------------------------------------------------------------------

export interface SimApp {
  clientId: string
  clientSecret: string
  /** The auth callback URL registered in the app profile; `redirect_uri` must be identical. */
  redirectUri: string
}

export interface AuthGrant {
  code: string
  scope: string
  context: string
  account_uuid: string
  user: { id: number; username: string; email: string }
  owner: { id: number; username: string; email: string }
  used: boolean
  expires_at: number
}

/** The login-host state, kept by the simulator. */
export interface LoginState {
  app: SimApp
  grants: Map<string, AuthGrant>
  /** Creates the store token for a successful exchange. */
  issueToken(storeHash: string, scopes: string[]): string
}

/** A new auth callback: the query the merchant's browser would bring to our `/platform/auth` (§1.1). */
export function newGrant(core: SimCore, login: LoginState, storeHash: string, scopes: string[]): AuthGrant {
  const grant: AuthGrant = {
    code: randomBytes(8).toString('hex'),
    scope: scopes.join(' '),
    context: `stores/${storeHash}`,
    account_uuid: randomUUID(),
    user: { id: 24654, username: 'merchant@example.com', email: 'merchant@example.com' },
    owner: { id: 24654, username: 'merchant@example.com', email: 'merchant@example.com' },
    used: false,
    expires_at: core.now().getTime() + 10 * 60_000,
  }
  login.grants.set(grant.code, grant)
  return grant
}

/**
 * POST /oauth2/token (§1.2). AUTH shows a JSON body; a form-encoded body is accepted too (the
 * OAuth 2 standard's encoding; simulator's reading). Errors are not in the reference: 401
 * invalid_client for wrong client credentials, 400 invalid_grant / invalid_request otherwise
 * (RFC 6749 shapes; simulator's reading).
 */
export function exchangeToken(ctx: Ctx, login: LoginState): Reply {
  const type = requireJsonContentType(ctx.headers, ['application/x-www-form-urlencoded'])
  let body: Record<string, unknown>
  if (type === 'application/json') {
    const parsed = parseJson(ctx.rawBody)
    if (!isObject(parsed)) throw new Refusal(400, 'body', 'The request body must be a JSON object', { title: 'invalid_request' })
    body = parsed
  } else body = Object.fromEntries(new URLSearchParams(ctx.rawBody))
  const missing = ['client_id', 'client_secret', 'code', 'context', 'scope', 'grant_type', 'redirect_uri'].filter((f) => typeof body[f] !== 'string' || body[f] === '')
  if (missing.length > 0) throw new Refusal(400, 'body', `Missing or non-string: ${missing.join(', ')}`, { title: 'invalid_request' })
  if (body.grant_type !== 'authorization_code') throw new Refusal(400, 'body', 'grant_type must be authorization_code', { title: 'unsupported_grant_type' })
  if (body.client_id !== login.app.clientId || body.client_secret !== login.app.clientSecret) throw new Refusal(401, 'auth', 'Invalid client id or secret', { title: 'invalid_client' })
  if (body.redirect_uri !== login.app.redirectUri) throw new Refusal(400, 'body', 'redirect_uri must be identical to the auth callback registered in the app profile', { title: 'invalid_grant' })
  const grant = login.grants.get(body.code as string)
  if (!grant || grant.used || grant.expires_at <= ctx.core.now().getTime()) throw new Refusal(400, 'state', 'The code is unknown, used or expired', { title: 'invalid_grant' })
  if (body.context !== grant.context) throw new Refusal(400, 'body', `context must be the callback's (${grant.context})`, { title: 'invalid_grant' })
  if (body.scope !== grant.scope) throw new Refusal(400, 'body', "scope must be the callback's scope, space-separated", { title: 'invalid_scope' })
  grant.used = true
  const storeHash = grant.context.slice('stores/'.length)
  const accessToken = login.issueToken(storeHash, grant.scope.split(' '))
  return {
    status: 200,
    body: { access_token: accessToken, scope: grant.scope, user: grant.user, owner: grant.owner, context: grant.context, account_uuid: grant.account_uuid },
  }
}
