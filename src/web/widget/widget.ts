/**
 * Storefront plan widget, served as /widget.js and embedded with one tag per product:
 *
 *   <script src="https://billing.example.com/widget.js" async
 *     data-store-hash="abc" data-platform-product-id="112"
 *     data-api-origin="https://billing.example.com"   (default: the script's own origin)
 *     data-one-time-price="2500"                       (minor units; default: the product's one-time price)
 *     data-target="#subscribe-here"></script>          (default: right after the script tag)
 *
 * Optional too: data-currency (of data-one-time-price; default: the product's or the plans'
 * currency) and data-locale for number formatting (default: <html lang>, else the browser's).
 *
 * It reads the product's active plans from GET /api/v1/storefront/plans (CORS open, no cookies),
 * 100 a page, following next_cursor until it is null, and renders a radio group, "One-time
 * purchase" plus one option per plan, inside a Shadow DOM root: the host page's CSS does not reach
 * in and the widget's does not leak out. Picking an option
 * dispatches `subscription-widget:select` (bubbles, composed) on the widget's element, which
 * reaches the document, with detail { store_hash, platform_product_id, plan_id, plan } (plan_id and
 * plan null for one-time purchase); the element's `data-plan-id` holds the current choice too.
 * No globals, no dependencies. Custom properties are the one way in: a theme may set
 * `--subscription-widget-accent` (selection colour) and `--subscription-widget-color` (the heading,
 * which sits on the page's own background) on the page or the <subscription-widget> element.
 */
import { formatMoney, intervalText, perCycle, planNotes, savingsPercent, type Money, type Plan } from './format.ts'

const SELECT_EVENT = 'subscription-widget:select'

export interface SelectDetail {
  store_hash: string
  platform_product_id: string
  plan_id: string | null
  plan: Plan | null
}

interface StorefrontPlans {
  data: Plan[]
  next_cursor: string | null
  product?: { name: string; one_time_price: Money | null }
}

/** The most plans one page may hold; a product with more comes in several pages. */
const PAGE_SIZE = 100
/** A stop for a server that keeps answering cursors: no product page offers this many plans. */
const MAX_PAGES = 50

const warn = (...args: unknown[]) => console.warn('[subscription-widget]', ...args)

const STYLES = `
:host{all:initial;display:block}
.w{all:initial;display:block;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1f2328;--a:var(--subscription-widget-accent,#1d5bd6)}
*{box-sizing:border-box}
fieldset{margin:0;padding:0;border:0;min-width:0;display:grid;gap:8px}
legend{padding:0;margin:0 0 8px;font-weight:600;color:var(--subscription-widget-color,#1f2328)}
label{display:grid;grid-template-columns:auto 1fr auto;gap:2px 10px;align-items:start;padding:12px 14px;border:1px solid #c4cad3;border-radius:8px;background:#fff;cursor:pointer}
label:hover{border-color:#7d8796}
label:has(:checked){border-color:var(--a);box-shadow:0 0 0 1px var(--a);background:#fff;background:color-mix(in srgb,var(--a) 6%,#fff)}
label:has(:focus-visible){outline:2px solid var(--a);outline-offset:2px}
input{margin:2px 0 0;width:18px;height:18px;accent-color:var(--a);cursor:pointer}
input:focus-visible{outline:0}
.t{font-weight:600}
.s{display:inline-block;padding:0 8px;border-radius:999px;background:#dff3e4;color:#11632a;font-size:12px;font-weight:600;line-height:20px;vertical-align:1px;white-space:nowrap}
.p{text-align:right;font-weight:600;white-space:nowrap}
.i{display:block;font-size:13px;font-weight:400;color:#59636e}
.n{grid-column:2/-1;font-size:13px;color:#59636e}
`

function el(tag: string, className?: string, ...children: (Node | string)[]): HTMLElement {
  const node = document.createElement(tag)
  if (className) node.className = className
  node.append(...children)
  return node
}

function option(name: string, value: string, title: string, price: string, interval: string, badge: string, notes: string[]): HTMLElement {
  const input = document.createElement('input')
  input.type = 'radio'
  input.name = name
  input.value = value
  const heading = el('span', 't', title)
  const main = el('span', '', heading)
  if (badge) main.append(' ', el('span', 's', badge))
  const label = el('label', '', input, main)
  if (price) label.append(el('span', 'p', price, ...(interval ? [el('span', 'i', interval)] : [])))
  if (notes.length) label.append(el('span', 'n', notes.join(' · ')))
  return label
}

function oneTimePrice(script: HTMLScriptElement, answer: StorefrontPlans): Money | null {
  const attribute = script.dataset.oneTimePrice
  if (attribute) {
    const amount = Number(attribute)
    if (Number.isInteger(amount) && amount >= 0) {
      return { amount, currency: script.dataset.currency?.toUpperCase() || answer.product?.one_time_price?.currency || answer.data[0]!.currency }
    }
    warn('data-one-time-price must be an integer amount in minor units (2500 for $25.00):', attribute)
  }
  return answer.product?.one_time_price ?? null
}

function locale(script: HTMLScriptElement): string | undefined {
  const wanted = script.dataset.locale || document.documentElement.lang
  try {
    return wanted && Intl.NumberFormat.supportedLocalesOf(wanted).length ? wanted : undefined
  } catch {
    return undefined
  }
}

/** Where the widget goes: into data-target, else right after its script tag (never into <head>). */
function place(script: HTMLScriptElement, host: HTMLElement): boolean {
  const target = script.dataset.target
  if (target) {
    const parent = document.querySelector(target)
    if (!parent) return warn('no element matches data-target', target), false
    parent.append(host)
    return true
  }
  if (!script.parentElement || script.parentElement === document.head) return warn('set data-target when the script tag is in <head>'), false
  script.after(host)
  return true
}

/** Every page of the product's plans, following next_cursor, as one answer (the first page's product). */
async function loadPlans(origin: string, storeHash: string, platformProductId: string): Promise<StorefrontPlans> {
  let answer: StorefrontPlans | undefined
  let cursor: string | null = null
  for (let pages = 0; pages < MAX_PAGES && (answer === undefined || cursor !== null); pages++) {
    const query = new URLSearchParams({ store_hash: storeHash, platform_product_id: platformProductId, limit: String(PAGE_SIZE) })
    if (cursor !== null) query.set('cursor', cursor)
    const response = await fetch(`${origin}/api/v1/storefront/plans?${query}`, { credentials: 'omit' })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    const page = (await response.json()) as StorefrontPlans
    if (!Array.isArray(page.data)) throw new Error('the answer holds no plan list')
    answer = answer ? { ...answer, data: [...answer.data, ...page.data] } : page
    cursor = typeof page.next_cursor === 'string' ? page.next_cursor : null
  }
  return answer!
}

async function mount(script: HTMLScriptElement): Promise<void> {
  const { storeHash, platformProductId } = script.dataset
  if (!storeHash || !platformProductId) return warn('data-store-hash and data-platform-product-id are required')
  const origin = new URL(script.dataset.apiOrigin || script.src || location.href, location.href).origin
  let answer: StorefrontPlans
  try {
    answer = await loadPlans(origin, storeHash, platformProductId)
  } catch (error) {
    return warn('could not load plans:', error)
  }
  // Nothing to offer: the product page stays as it was.
  if (answer.data.length === 0) return
  if (document.readyState === 'loading') await new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, { once: true }))

  const lang = locale(script)
  const oneTime = oneTimePrice(script, answer)
  const name = `plan-${Math.random().toString(36).slice(2)}`
  const plans = new Map(answer.data.map((plan) => [plan.id, plan]))
  const host = document.createElement('subscription-widget')
  host.dataset.planId = ''
  const root = host.attachShadow({ mode: 'open' })
  const style = document.createElement('style')
  style.textContent = STYLES
  const fieldset = el('fieldset', '', el('legend', '', 'Purchase options'))
  fieldset.append(option(name, '', 'One-time purchase', oneTime ? formatMoney(oneTime.amount, oneTime.currency, lang) : '', '', '', []))
  for (const plan of answer.data) {
    const saving = savingsPercent(plan, oneTime)
    fieldset.append(option(name, plan.id, plan.name, formatMoney(perCycle(plan), plan.currency, lang), intervalText(plan), saving ? `Save ${saving}%` : '', planNotes(plan, lang)))
  }
  ;(fieldset.querySelector('input') as HTMLInputElement).checked = true
  fieldset.addEventListener('change', (event) => {
    const planId = (event.target as HTMLInputElement).value || null
    host.dataset.planId = planId ?? ''
    const detail: SelectDetail = { store_hash: storeHash, platform_product_id: platformProductId, plan_id: planId, plan: planId ? plans.get(planId) ?? null : null }
    host.dispatchEvent(new CustomEvent(SELECT_EVENT, { bubbles: true, composed: true, detail }))
  })
  root.append(style, el('div', 'w', fieldset))
  place(script, host)
}

const current = document.currentScript
if (current instanceof HTMLScriptElement) {
  mount(current).catch((error) => warn(error))
} else {
  warn('load widget.js with a classic <script> tag')
}
