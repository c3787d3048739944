import { api, ApiError, errorText } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, type Child } from '../../shared/dom.ts'
import { date, dateTime, money } from '../format.ts'
import type { Charge, Subscription } from '../types.ts'
import { actionForm, definitionList, field, input, select } from '../ui.ts'

/**
 * Payment recovery (docs/contract.md, Payment recovery): a failed renewal retried now, an email with
 * a single-use link to the portal's payment page, and another card of the subscriber. Used on the
 * subscription page (its "Payment recovery" section) and beside each row of the attention list.
 */

/** Who pays and how, as the forms name them. */
export interface RecoveryTarget {
  id: string
  email: string
  /** What the charge to retry asks for, when known. */
  charge?: Pick<Charge, 'amount' | 'currency' | 'period_start'> | undefined
  /** "Visa ending in 4242", or the instrument id on a test store. */
  card?: string | undefined
}

/**
 * A subscription owes a failed renewal when it is past due, or active with its latest charge failed
 * and a retry to come (not a renewal waiting for stock: no card failed there). Read from its current
 * state, never from older failed charges.
 */
export function recoveryState(s: Subscription, charges: Charge[]): { kind: 'dunning' | 'past_due'; latest: Charge | undefined } | null {
  const latest = charges.find((c) => c.id === s.latest_charge_id)
  if (s.status === 'past_due') return { kind: 'past_due', latest: latest?.status === 'failed' ? latest : charges.find((c) => c.status === 'failed') }
  if (s.status === 'active' && latest && latest.status === 'failed' && latest.next_retry_at && latest.failure_code !== 'out_of_stock' && !s.out_of_stock_since) return { kind: 'dunning', latest }
  return null
}

/**
 * What a new card does for a failed renewal: retried with it at once, or, while the store's billing is
 * switched off (the cutover switch), kept until billing is on: nothing is charged meanwhile, so saying
 * "retried now" would promise a charge that does not happen.
 */
export function newCardRetryText(billingOff: boolean): string {
  return billingOff
    ? 'Billing is off for this store: the card is saved, and the failed renewal runs with it when billing is turned on.'
    : 'The failed payment is retried with it now.'
}

export function cardText(s: Subscription): string {
  return s.payment_instrument ? `${s.payment_instrument.brand ?? 'Card'} ending in ${s.payment_instrument.last_4 ?? '?'}` : s.payment_instrument_id
}

/** "Retry now": the failed renewal charged now with the current card, through the renewal engine. */
export function retryNowForm(target: RecoveryTarget, done: () => Promise<unknown>, { compact = false }: { compact?: boolean } = {}): HTMLFormElement {
  return actionForm({
    requires: 'support',
    label: 'Retry now',
    className: compact ? 'compact inline' : '',
    confirm: () => ({
      title: 'Retry the failed payment now?',
      body: [
        h('p', null, `${target.charge ? `${money(target.charge.amount, target.charge.currency)} for the renewal of ${date(target.charge.period_start)}` : 'The failed renewal'} is charged now${target.card ? ` to ${target.card}` : ' to the card on file'}.`),
        h('p', null, 'If it fails again it counts as one of the retries; the next one follows the store’s schedule.'),
      ],
      confirmLabel: 'Retry now',
    }),
    run: async () => {
      const charge = await api.retryCharge(target.id)
      if (charge.status === 'succeeded') return `Paid: ${money(charge.amount, charge.currency)} was charged and the subscription of ${target.email} is active.`
      if (charge.status === 'pending') return 'The payment was sent; the gateway has not answered yet. Its outcome shows under Charges.'
      return `The payment failed again: ${(charge.failure_message ?? charge.failure_code ?? 'declined').replace(/\.+$/, '')}.${charge.next_retry_at ? ` Next retry ${dateTime(charge.next_retry_at)}.` : ' No retries are left: the subscription is past due.'}`
    },
    done,
  })
}

/** "Send update-card link": an email with a single-use link to the portal's payment page for this subscription. */
export function sendLinkForm(target: RecoveryTarget, done: () => Promise<unknown>, { compact = false, billingOff = false }: { compact?: boolean; billingOff?: boolean } = {}): HTMLFormElement {
  return actionForm({
    requires: 'support',
    label: 'Send update-card link',
    className: compact ? 'compact inline' : '',
    confirm: () => ({
      title: `Email ${target.email} a link to update their card?`,
      body: [h('p', null, `The email holds a sign-in link that opens the payment method of this subscription in their account. It works once, for 72 hours. ${billingOff ? 'A new card is saved; billing is off for this store, so the failed renewal runs with it when billing is turned on.' : 'A new card retries the failed payment at once.'}`)],
      confirmLabel: 'Send the link',
    }),
    run: async () => {
      await api.paymentUpdateLink(target.id)
      return `The email to ${target.email} is on its way; it is listed under Settings, Emails sent.`
    },
    done,
  })
}

/**
 * "Change card": on a store that charges through BigCommerce, one of the subscriber's other stored
 * cards (as the portal lists them); on a test-gateway store, any instrument id typed in.
 */
export function changeCardForm(
  s: Subscription,
  done: () => Promise<unknown>,
  { owesPayment, storeGateway, billingOff = false }: { owesPayment: boolean; storeGateway: 'platform' | 'test' | undefined; billingOff?: boolean },
): HTMLElement {
  const choice = select('payment_instrument_id', [['', 'Loading the stored cards…']])
  choice.disabled = true
  const typed = input({ type: 'text', name: 'payment_instrument_token', autocomplete: 'off', spellcheck: false, maxlength: 200 })
  const typedField = () => field('Payment instrument id', typed, { hint: 'The test gateway keeps no cards: any id is accepted (one ending in _declined is declined).' })
  // Laid out at once from the store's gateway, when the page knows it: a form that changed shape once
  // the cards arrived moved the buttons below it under the merchant's pointer (a click meant for
  // "Remove discount" landed on nothing).
  const holder = h('div', { class: 'card-choice' }, storeGateway === 'test' ? typedField() : field('Card', choice))
  let gateway: 'platform' | 'test' | null = storeGateway === 'test' ? 'test' : null
  const labels = new Map<string, string>()
  if (gateway !== 'test') void api.paymentInstruments(s.id).then(
    (list) => {
      gateway = list.gateway
      if (list.gateway === 'test') {
        holder.replaceChildren(typedField())
        return
      }
      const others = list.data.filter((card) => card.token !== s.payment_instrument_id)
      choice.replaceChildren(h('option', { value: '' }, others.length ? 'Choose a card' : 'No other stored card'))
      for (const card of others) {
        const label = `${card.brand ?? 'Card'} ending in ${card.last_4 ?? '?'}${card.expiry_month && card.expiry_year ? `, expires ${String(card.expiry_month).padStart(2, '0')}/${card.expiry_year}` : ''}${card.is_default ? ' (default)' : ''}`
        labels.set(card.token, label)
        choice.append(h('option', { value: card.token }, label))
      }
      choice.disabled = others.length === 0
    },
    (error: unknown) => {
      choice.replaceChildren(h('option', { value: '' }, 'The stored cards could not be read'))
      holder.append(h('p', { class: 'hint' }, error instanceof ApiError ? errorText(error) : 'Try again later.'))
    },
  )
  const chosen = () => (gateway === 'test' ? typed.value.trim() : choice.value)
  return actionForm({
    requires: 'support',
    label: 'Change card',
    fields: [holder],
    confirm: () => {
      if (gateway === null) return 'The stored cards are still loading; try again in a moment.'
      if (!chosen()) return gateway === 'test' ? 'Type the payment instrument id to charge.' : 'Choose the card to charge.'
      const what = gateway === 'test' ? chosen() : (labels.get(chosen()) ?? 'this card')
      return {
        title: 'Charge another card from now on?',
        body: [h('p', null, `This subscription is paid with ${what} from now on, instead of ${cardText(s)}.`), owesPayment ? h('p', null, billingOff ? newCardRetryText(true) : 'The failed payment is retried with it at once; its outcome shows under Charges.') : null],
        confirmLabel: 'Change card',
      }
    },
    run: async () => {
      const answer = await api.action(s.id, 'payment-instrument', { payment_instrument_id: chosen() })
      return `The card is changed to ${answer.payment_instrument ? `${answer.payment_instrument.brand ?? 'Card'} ending in ${answer.payment_instrument.last_4 ?? '?'}` : answer.payment_instrument_id}.${owesPayment ? ` ${newCardRetryText(billingOff)}` : ''}`
    },
    done,
  })
}

/**
 * The subscription page's "Payment recovery" section: what failed and what comes next, in words, and
 * the three ways out. Null when nothing is owed.
 */
export function paymentRecoverySection(app: ConsoleApp, s: Subscription, email: string, charges: Charge[], reload: () => Promise<unknown>): HTMLElement | null {
  const state = recoveryState(s, charges)
  if (!state) return null
  const { latest } = state
  const failures = charges.filter((c) => c.status === 'failed' && latest && c.period_start === latest.period_start && c.failure_code !== 'out_of_stock' && c.failure_code !== 'billing_disabled').length
  const cancelDays = app.store?.past_due_cancel_days
  const pastDueAt = s.past_due_at ?? null
  const facts: [string, Child][] = [
    ['Unpaid', latest ? `${money(latest.amount, latest.currency)} for ${date(latest.period_start)} to ${date(latest.period_end)}` : '—'],
    ['Last failure', latest ? `${dateTime(latest.settled_at ?? latest.created_at)}: ${(latest.failure_message ?? latest.failure_code ?? 'declined').replace(/\.+$/, '')}` : '—'],
    ['Failed attempts', String(failures || '—')],
    state.kind === 'dunning'
      ? ['Next retry', dateTime(latest?.next_retry_at)]
      : ['Retries', `Used up${pastDueAt ? `; past due since ${dateTime(pastDueAt)}` : ''}${pastDueAt && cancelDays ? `, cancelled on ${date(new Date(Date.parse(pastDueAt) + cancelDays * 86_400_000).toISOString())} unless paid` : ''}`],
    ['Card', cardText(s)],
  ]
  const target: RecoveryTarget = { id: s.id, email, charge: latest, card: cardText(s) }
  const billingOff = app.store?.billing_enabled === false
  return h(
    'section',
    { class: 'panel recovery', 'aria-label': 'Payment recovery', 'data-recovery': state.kind },
    h('h2', null, 'Payment recovery'),
    h('p', null, state.kind === 'dunning' ? 'The renewal payment failed and is retried on the store’s schedule. You can retry it now, ask the subscriber for another card, or charge another card yourself.' : 'Every retry failed: the subscription is past due. Retry it now, ask the subscriber for another card, or charge another card yourself.'),
    definitionList(facts),
    h(
      'div',
      { class: 'recovery-actions' },
      h('div', { class: 'action-group' }, h('h3', null, 'Try the same card again'), retryNowForm(target, reload)),
      h('div', { class: 'action-group' }, h('h3', null, 'Ask the subscriber for a new card'), sendLinkForm(target, reload, { billingOff })),
      h('div', { class: 'action-group' }, h('h3', null, 'Charge another card'), changeCardForm(s, reload, { owesPayment: true, storeGateway: app.store?.gateway, billingOff })),
    ),
  )
}
