import { all, api } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { currency, currentTimeZone, date, isoToStoreInput, money, number, storeTimeToIso, toMinor } from '../format.ts'
import type { Discount, Plan } from '../types.ts'
import { actionForm, badge, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'

/** What a discount takes off, in words: "20% off" or "$5.00 off". */
export function discountTerms(d: { type: Discount['type']; value: number; currency?: string | null }): string {
  return d.type === 'percentage' ? `${d.value}% off` : `${money(d.value, d.currency ?? currency())} off`
}

export function durationText(d: Pick<Discount, 'duration' | 'duration_in_cycles'>): string {
  if (d.duration === 'once') return 'the next charge'
  if (d.duration === 'forever') return 'every charge'
  return `${d.duration_in_cycles} charges`
}

/** Discount codes: list, create, edit (limits, window, plans), deactivate, delete. */
export async function renderDiscounts(app: ConsoleApp, isCurrent: () => boolean, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  if (focus) {
    replaceChildren(app.main, pageHeader('Discounts'), loading())
    app.finishRender('Discounts')
  }
  let discounts: Discount[], plans: Plan[]
  try {
    ;[discounts, plans] = await Promise.all([all((cursor) => api.discounts({ cursor })), all((cursor) => api.plans({ cursor }))])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader('Discounts'), errorBox(error))
    return
  }
  if (!isCurrent()) return
  const reload = () =>
    renderDiscounts(app, isCurrent, { focus: false }).then(() => {
      if (!isCurrent()) return
      app.focusHeading()
      app.announce(app.takeFlash() ?? 'Updated.')
    })
  const planName = new Map(plans.map((p) => [p.id, p.name]))
  const zone = currentTimeZone()

  const planPicker = (name: string, chosen: string[]) =>
    h(
      'fieldset',
      { class: 'plan-picker' },
      h('legend', null, 'Plans (none chosen: every plan)'),
      plans.filter((p) => p.active || chosen.includes(p.id)).map((p) => {
        const box = h('input', { type: 'checkbox', name, value: p.id, checked: chosen.includes(p.id), id: `${name}-${p.id}` })
        return h('div', { class: 'field checkbox' }, box, h('label', { for: box.id }, p.name))
      }),
    )
  const chosenPlans = (form: HTMLFormElement, name: string) => Array.from(form.querySelectorAll<HTMLInputElement>(`input[name="${name}"]:checked`), (box) => box.value)

  const editForm = (d: Discount) => {
    const max = input({ type: 'number', name: 'max_redemptions', min: 1, step: 1, value: d.max_redemptions ?? '', inputmode: 'numeric' })
    const starts = input({ type: 'datetime-local', name: 'starts_at', value: d.starts_at ? isoToStoreInput(d.starts_at) : '' })
    const ends = input({ type: 'datetime-local', name: 'ends_at', value: d.ends_at ? isoToStoreInput(d.ends_at) : '' })
    const pickName = `edit-plans-${d.id}`
    return h(
      'details',
      { class: 'disclosure' },
      h('summary', null, 'Edit…'),
      actionForm({
        label: 'Save changes',
        className: 'compact',
        fields: [
          field(`Most redemptions of ${d.code}`, max, { hint: `Empty: no limit. Used ${d.times_redeemed} times.` }),
          field(`Usable from (${zone})`, starts, { hint: 'Empty: from now.' }),
          field(`Usable until (${zone})`, ends, { hint: 'Empty: no end.' }),
          planPicker(pickName, d.applies_to_plan_ids),
        ],
        confirm: () => {
          if (max.value && !(Number.isInteger(Number(max.value)) && Number(max.value) >= 1)) return 'The most redemptions is a whole number of at least 1, or empty.'
          return { title: `Save the changes to ${d.code}?`, body: [h('p', null, 'They apply to later applications; subscriptions that carry the discount keep its terms.')], confirmLabel: 'Save' }
        },
        run: async (form) => {
          await api.updateDiscount(d.id, {
            max_redemptions: max.value ? Number(max.value) : null,
            starts_at: starts.value ? storeTimeToIso(starts.value) : null,
            ends_at: ends.value ? storeTimeToIso(ends.value) : null,
            applies_to_plan_ids: chosenPlans(form, pickName),
          })
          return `${d.code} is saved.`
        },
        done: reload,
      }),
    )
  }
  const toggle = (d: Discount) =>
    actionForm({
      label: d.active ? 'Deactivate' : 'Activate',
      className: 'compact',
      danger: d.active,
      confirm: () => ({
        title: d.active ? `Deactivate ${d.code}?` : `Activate ${d.code}?`,
        body: [h('p', null, d.active ? 'It can no longer be applied; subscriptions that carry it keep it.' : 'It can be applied again.')],
        confirmLabel: d.active ? 'Deactivate' : 'Activate',
      }),
      run: async () => {
        await api.updateDiscount(d.id, { active: !d.active })
        return `${d.code} is ${d.active ? 'deactivated' : 'active'}.`
      },
      done: reload,
    })
  const remove = (d: Discount) =>
    actionForm({
      label: 'Delete',
      className: 'compact',
      danger: true,
      confirm: () => ({ title: `Delete ${d.code}?`, body: [h('p', null, 'It can no longer be applied and its code becomes free. Subscriptions that carry it keep it until its charges run out or it is removed from them.')], confirmLabel: 'Delete', danger: true }),
      run: async () => {
        await api.deleteDiscount(d.id)
        return `${d.code} is deleted.`
      },
      done: reload,
    })

  const rows = discounts.map((d) => [
    h('code', null, d.code),
    `${discountTerms(d)}, ${durationText(d)}`,
    d.applies_to_plan_ids.length ? d.applies_to_plan_ids.map((id) => planName.get(id) ?? id).join(', ') : 'Every plan',
    `${number(d.times_redeemed)}${d.max_redemptions === null ? '' : ` of ${number(d.max_redemptions)}`}`,
    d.starts_at || d.ends_at ? `${d.starts_at ? `from ${date(d.starts_at)}` : ''}${d.starts_at && d.ends_at ? ' ' : ''}${d.ends_at ? `until ${date(d.ends_at)}` : ''}` : 'Always',
    d.active ? badge('Active', 'good') : badge('Inactive', 'muted'),
    h('div', { class: 'inline-actions' }, editForm(d), toggle(d), remove(d)),
  ])

  const code = input({ type: 'text', name: 'code', maxlength: 64, autocomplete: 'off', spellcheck: 'false' })
  const type = select('type', [['percentage', 'Percentage off'], ['fixed_amount', 'Fixed amount off']], 'percentage')
  const value = input({ type: 'text', name: 'value', inputmode: 'decimal', autocomplete: 'off' })
  const discountCurrency = input({ type: 'text', name: 'currency', value: currency(), maxlength: 3, size: 4, autocomplete: 'off' })
  const duration = select('duration', [['once', 'Once (the next charge)'], ['repeating', 'A number of charges'], ['forever', 'Forever']], 'once')
  const cycles = input({ type: 'number', name: 'duration_in_cycles', min: 1, max: 120, step: 1, inputmode: 'numeric' })
  const max = input({ type: 'number', name: 'max_redemptions', min: 1, step: 1, inputmode: 'numeric' })
  const ends = input({ type: 'datetime-local', name: 'ends_at' })
  const newPick = 'new-discount-plans'
  const amountOf = () => {
    const code = discountCurrency.value.trim().toUpperCase()
    return type.value === 'percentage' ? Number(value.value) : toMinor(value.value, code)
  }
  const create = actionForm({
    label: 'Create discount',
    fields: [
      field('Code', code, { hint: 'Letters, digits, - and _; subscribers type it in any case.' }),
      h('div', { class: 'two-col' }, field('Kind', type), field('Percent or amount off', value, { hint: 'Such as 20 (percent) or 5.00.' })),
      h('div', { class: 'two-col' }, field('Currency (amounts only)', discountCurrency), field('Duration', duration)),
      h('div', { class: 'two-col' }, field('Charges (a number of charges only)', cycles), field('Most redemptions (optional)', max)),
      field(`Usable until (optional, ${zone})`, ends),
      planPicker(newPick, []),
    ],
    confirm: () => {
      const amount = amountOf()
      if (!code.value.trim()) return 'Enter the code.'
      if (!Number.isInteger(amount) || amount < 1 || (type.value === 'percentage' && amount > 100)) return type.value === 'percentage' ? 'Enter the percent off, a whole number from 1 to 100.' : 'Enter the amount off, such as 5.00.'
      if (duration.value === 'repeating' && !(Number(cycles.value) >= 1)) return 'Enter how many charges it covers.'
      const terms = discountTerms({ type: type.value as Discount['type'], value: amount, currency: discountCurrency.value.trim().toUpperCase() })
      return { title: `Create the discount ${code.value.trim()}?`, body: [h('p', null, `${terms}, ${durationText({ duration: duration.value as Discount['duration'], duration_in_cycles: Number(cycles.value) || null })}. Its terms never change once made.`)], confirmLabel: 'Create discount' }
    },
    run: async (form) => {
      const created = await api.createDiscount({
        code: code.value.trim(),
        type: type.value,
        value: amountOf(),
        ...(type.value === 'fixed_amount' ? { currency: discountCurrency.value.trim().toUpperCase() } : {}),
        duration: duration.value,
        ...(duration.value === 'repeating' ? { duration_in_cycles: Number(cycles.value) } : {}),
        ...(max.value ? { max_redemptions: Number(max.value) } : {}),
        ...(ends.value ? { ends_at: storeTimeToIso(ends.value) } : {}),
        applies_to_plan_ids: chosenPlans(form, newPick),
      })
      return `Discount ${created.code} created.`
    },
    done: reload,
  })

  replaceChildren(
    app.main,
    pageHeader('Discounts', h('p', { class: 'subtitle' }, 'Codes for checkout, the portal and retention offers; apply one to a subscription from its page.')),
    section(`Discount codes (${discounts.length})`, discounts.length ? table('Discount codes', ['Code', 'Terms', 'Plans', 'Redeemed', 'Window', 'Status', 'Actions'], rows, { captionHidden: true }) : h('p', null, 'No discount codes yet.')),
    h('div', { class: 'form-panel' }, section('New discount', create)),
  )
  if (focus) app.refocusHeading()
}
