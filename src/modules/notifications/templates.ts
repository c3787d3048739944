import type { Mail } from '../../lib/mailer.ts'
import type { EmailTemplate } from './email-templates.ts'
import type { NotificationFacts } from './notifications.jobs.ts'

/**
 * The subscriber emails: a plain-text body for every client and an HTML body for those that show it,
 * both from the same parts. Everything put into the HTML is escaped (store and plan names are the
 * merchant's text). Of the payment method only the brand and last 4 ever appear.
 */

/** A renewal's figures in the charge's names (integer minor units). */
export interface RenewalBreakdown {
  next_charge_at: string
  currency: string
  subtotal: number
  discount_amount: number
  shipping_amount: number
  tax_amount: number
  amount: number
}

export interface EmailInput {
  template: EmailTemplate
  to: string
  storeName: string
  /** The store's IANA time zone: dates read as the store's calendar does. */
  timezone: string
  planName: string | null
  facts: NotificationFacts
  /** The renewal's breakdown (renewal_upcoming): its total replaces `facts.amount`, its parts are listed. */
  breakdown?: RenewalBreakdown
  /** Brand and last 4 of the card on file, when the platform listed them. */
  card: { brand: string | null; last4: string | null } | null
  /** Sign-in links, each single-use: `manage` always, `skip` and `paymentMethod` where the email offers them. */
  links: { manage: string; skip?: string; paymentMethod?: string }
}

interface Parts {
  subject: string
  /** Paragraphs of plain text. */
  paragraphs: string[]
  /** Calls to action, most important first. */
  actions: { label: string; href: string }[]
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!)

export function formatAmount(amount: number | undefined, currency: string | undefined): string | undefined {
  if (amount === undefined || !currency) return undefined
  try {
    const format = new Intl.NumberFormat('en-US', { style: 'currency', currency })
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2
    return format.format(amount / 10 ** digits)
  } catch {
    return `${amount} ${currency} (minor units)`
  }
}

export function formatDate(iso: string | null | undefined, timezone: string): string | undefined {
  if (!iso) return undefined
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return undefined
  try {
    return new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: timezone }).format(date)
  } catch {
    return new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' }).format(date)
  }
}

/**
 * "Items $36.00, less a $3.60 discount, plus $5.99 shipping and $2.67 tax." Parts that are 0 are left
 * out; undefined when the total is the items alone.
 */
export function breakdownText(b: RenewalBreakdown): string | undefined {
  const money = (value: number) => formatAmount(value, b.currency)!
  if (b.discount_amount === 0 && b.shipping_amount === 0 && b.tax_amount === 0) return undefined
  const extras = [b.shipping_amount > 0 ? `${money(b.shipping_amount)} shipping` : undefined, b.tax_amount > 0 ? `${money(b.tax_amount)} tax` : undefined].filter(Boolean)
  return `Items ${money(b.subtotal)}${b.discount_amount > 0 ? `, less a ${money(b.discount_amount)} discount` : ''}${extras.length ? `, plus ${extras.join(' and ')}` : ''}.`
}

/** "Visa ending in 4242", never more of the card; undefined when nothing is known of it. */
export function cardText(card: EmailInput['card']): string | undefined {
  if (!card || (!card.brand && !card.last4)) return undefined
  const last4 = card.last4 && /^\d{4}$/.test(card.last4) ? card.last4 : null
  const brand = card.brand ? card.brand.replace(/[^A-Za-z .-]/g, '').trim() : ''
  if (last4) return `${brand || 'Card'} ending in ${last4}`
  return brand || undefined
}

function parts(input: EmailInput): Parts {
  const { storeName, facts, links } = input
  const what = input.planName ? `your ${input.planName} subscription` : 'your subscription'
  const breakdown = input.breakdown
  const amount = breakdown ? formatAmount(breakdown.amount, breakdown.currency) : formatAmount(facts.amount, facts.currency)
  const nextDate = formatDate(facts.next_charge_at, input.timezone)
  const card = cardText(input.card)
  const manage = { label: 'Manage your subscription', href: links.manage }
  switch (input.template) {
    case 'subscription_created':
      return {
        subject: `Your subscription with ${storeName} has started`,
        paragraphs: [
          `Thank you for subscribing to ${storeName}: ${what} is set up.`,
          ...(amount && nextDate ? [`Your next charge of ${amount} is on ${nextDate}.`] : nextDate ? [`Your next charge is on ${nextDate}.`] : []),
          'You can skip, pause, change or cancel it at any time from your account.',
        ],
        actions: [manage],
      }
    case 'renewal_upcoming':
      return {
        subject: `Your ${storeName} subscription renews${nextDate ? ` on ${nextDate}` : ' soon'}`,
        paragraphs: [
          `${what[0]!.toUpperCase()}${what.slice(1)} renews${nextDate ? ` on ${nextDate}` : ' soon'}${amount ? ` for ${amount}` : ''}.`,
          ...(breakdown ? [breakdownText(breakdown)].filter((text): text is string => text !== undefined) : []),
          ...(card ? [`We will charge your ${card}.`] : []),
          'Nothing to do if that suits you. To skip this order or change anything, use the links below.',
        ],
        actions: [...(links.skip ? [{ label: 'Skip this order', href: links.skip }] : []), manage],
      }
    case 'payment_failed':
      return {
        subject: `Action needed: your payment to ${storeName} did not go through`,
        paragraphs: [
          `We could not collect ${amount ?? 'the payment'} for ${what}${card ? ` with your ${card}` : ''}.`,
          ...(facts.next_retry_at ? [`We will try again on ${formatDate(facts.next_retry_at, input.timezone)}. Updating your payment method now keeps your subscription going.`] : ['Please update your payment method to keep your subscription going.']),
        ],
        actions: [{ label: 'Update your payment method', href: links.paymentMethod ?? links.manage }, manage],
      }
    case 'past_due':
      return {
        subject: `Your ${storeName} subscription is past due`,
        paragraphs: [
          `We tried several times but could not collect the payment for ${what}, so it is past due.`,
          'Update your payment method to bring it back; otherwise it will be cancelled.',
        ],
        actions: [{ label: 'Update your payment method', href: links.paymentMethod ?? links.manage }, manage],
      }
    case 'cancelled':
      return {
        subject: `Your ${storeName} subscription is cancelled`,
        paragraphs: [`${what[0]!.toUpperCase()}${what.slice(1)} with ${storeName} is cancelled: there will be no further charges.`, 'You can see its history in your account.'],
        actions: [{ label: 'View your account', href: links.manage }],
      }
    case 'payment_instrument_expiring': {
      const expiry = facts.expiry_month && facts.expiry_year ? `${String(facts.expiry_month).padStart(2, '0')}/${facts.expiry_year}` : undefined
      return {
        subject: `Your card for ${storeName} expires before your next renewal`,
        paragraphs: [
          `The ${card ?? 'card'} that pays for ${what} expires${expiry ? ` at the end of ${expiry}` : ' soon'}, before your next renewal${nextDate ? ` on ${nextDate}` : ''}.`,
          'Choose another saved card to avoid a failed payment.',
        ],
        actions: [{ label: 'Update your payment method', href: links.paymentMethod ?? links.manage }, manage],
      }
    }
    case 'payment_update_link':
      return {
        subject: `Update your payment method for ${storeName}`,
        paragraphs: [
          `${storeName} asks you to check the payment method for ${what}${card ? `, now your ${card}` : ''}.`,
          'Use the link below to sign in and choose the card to pay with. Your subscription goes on with it.',
        ],
        actions: [{ label: 'Update your payment method', href: links.paymentMethod ?? links.manage }, manage],
      }
    case 'price_change_notice': {
      const from = formatDate(facts.effective_at, input.timezone)
      const before = formatAmount(facts.previous_amount, facts.currency)
      const after = formatAmount(facts.amount, facts.currency)
      return {
        subject: `The price of your ${storeName} subscription changes${from ? ` on ${from}` : ''}`,
        paragraphs: [
          `The price of ${what} changes${before && after ? ` from ${before} to ${after}` : after ? ` to ${after}` : ''}.`,
          from
            ? `Your renewals until then stay at ${before ?? 'the current price'}; the renewal on ${from} is the first at ${after ?? 'the new price'}.`
            : `The change applies from your first renewal after the notice period.`,
          'Nothing to do if that suits you. You can change, pause or cancel your subscription from your account before then.',
        ],
        actions: [manage],
      }
    }
    case 'renewal_skipped': {
      const skipped = formatDate(facts.skipped_period_start, input.timezone)
      return {
        subject: `Your ${storeName} order${skipped ? ` of ${skipped}` : ''} was skipped: out of stock`,
        paragraphs: [
          `An item of ${what} was out of stock, so the renewal${skipped ? ` of ${skipped}` : ''} was skipped and nothing was charged.`,
          ...(nextDate ? [`Your next renewal is on ${nextDate}.`] : []),
        ],
        actions: [manage],
      }
    }
  }
}

const FOOTER = (storeName: string) => `Each link signs you in to your ${storeName} account once and works for 72 hours. You receive this email because you subscribe with ${storeName}.`

/** The email for one notification. */
export function renderEmail(input: EmailInput): Mail {
  const { subject, paragraphs, actions } = parts(input)
  const text = [
    'Hello,',
    '',
    ...paragraphs.flatMap((paragraph) => [paragraph, '']),
    ...actions.flatMap((action) => [`${action.label}:`, action.href, '']),
    FOOTER(input.storeName),
    '',
    `${input.storeName}`,
  ].join('\n')
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a">
<p><strong>${escapeHtml(input.storeName)}</strong></p>
<p>Hello,</p>
${paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('\n')}
${actions.map((action) => `<p><a href="${escapeHtml(action.href)}">${escapeHtml(action.label)}</a></p>`).join('\n')}
<p style="color: #555; font-size: 0.9em">${escapeHtml(FOOTER(input.storeName))}</p>
</body></html>`
  return { to: input.to, subject, text, html }
}
