import { errorText } from './api.ts'
import { confirmAction } from '../shared/confirm.ts'
import { field, h, replaceChildren, type Child } from '../shared/dom.ts'
import { app } from './app.ts'
import { mayChange } from './session.ts'

/** A page's heading row: the h1 the focus goes to, and an optional line under it. */
export function pageHeader(title: string, ...extra: Child[]): HTMLElement {
  return h('header', { class: 'page-header' }, h('h1', null, title), ...extra)
}

export function loading(label = 'Loading…'): HTMLElement {
  return h('p', { class: 'loading', role: 'status' }, label)
}

/** A refusal in words, inside the page where it happened (role=alert is read out at once). */
export function errorBox(error: unknown): HTMLElement {
  return h('p', { class: 'error-box', role: 'alert' }, errorText(error))
}

export function badge(text: string, tone: string): HTMLElement {
  return h('span', { class: `badge ${tone}` }, text)
}

export function input(attrs: Record<string, string | number | boolean | null | undefined>): HTMLInputElement {
  return h('input', attrs)
}

export function select(name: string, options: [string, string][], selected?: string | null): HTMLSelectElement {
  return h('select', { name }, options.map(([value, label]) => h('option', { value, selected: value === (selected ?? '') }, label)))
}

export interface ActionFormOptions {
  /** The button's words ("Pause"). */
  label: string
  /** The scope the change needs: `support` for actions on subscriptions, charges and change requests; `full` (default) for the rest. */
  requires?: 'full' | 'support'
  fields?: HTMLElement[]
  /** What the dialog asks, from the form's values; null skips the question (nothing changes). */
  confirm: (form: HTMLFormElement) => { title: string; body: Child[]; confirmLabel: string; danger?: boolean } | string
  /** Does the change; what it answers becomes the announcement. A thrown refusal is shown in words. */
  run: (form: HTMLFormElement) => Promise<string>
  /** After success (re-render the page, usually). */
  done?: () => unknown
  danger?: boolean
  className?: string
}

/**
 * One admin action: its fields, a button, a confirmation dialog, then the call. A refusal shows in
 * the form in the API's words (and is read out); success is announced in the live region.
 */
export function actionForm(options: ActionFormOptions): HTMLFormElement {
  // A change the credential's scope does not allow is not offered (the API would refuse it: 403).
  if (!mayChange(options.requires ?? 'full')) return h('form', { class: 'action-form', hidden: true })
  const status = h('div', { class: 'form-status' })
  const button = h('button', { type: 'submit', class: options.danger ? 'button danger' : 'button secondary' }, options.label)
  const form = h('form', { class: `action-form ${options.className ?? ''}`, novalidate: true }, ...(options.fields ?? []), h('div', { class: 'button-row' }, button), status)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void (async () => {
      replaceChildren(status)
      const question = options.confirm(form)
      if (typeof question === 'string') {
        replaceChildren(status, h('p', { class: 'error-box', role: 'alert' }, question))
        return
      }
      const confirmed = await confirmAction({ ...question, danger: question.danger ?? options.danger ?? false })
      if (!confirmed) return
      button.disabled = true
      button.setAttribute('aria-busy', 'true')
      try {
        const message = await options.run(form)
        app.flashNext(message)
        if (options.done) await options.done()
        // A page that re-rendered has read the message out already; otherwise it is read out here.
        const pending = app.takeFlash()
        if (pending) app.announce(pending)
      } catch (error) {
        replaceChildren(status, errorBox(error))
        app.announce(`Refused: ${(status.textContent ?? '').trim()}`, { kind: 'error' })
      } finally {
        button.disabled = false
        button.removeAttribute('aria-busy')
      }
    })()
  })
  return form
}

export { field }

/** A table that scrolls sideways on narrow screens instead of squeezing its columns. */
export function table(caption: string, headings: string[], rows: Child[][], { captionHidden = false }: { captionHidden?: boolean } = {}): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 },
    h(
      'table',
      null,
      h('caption', { class: captionHidden ? 'visually-hidden' : null }, caption),
      h('thead', null, h('tr', null, headings.map((heading) => h('th', { scope: 'col' }, heading)))),
      h('tbody', null, rows.map((cells) => h('tr', null, cells.map((cell, index) => (index === 0 ? h('th', { scope: 'row' }, cell) : h('td', null, cell)))))),
    ),
  )
}

export function definitionList(items: [string, Child][]): HTMLElement {
  return h('dl', { class: 'facts' }, items.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, value))))
}

export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'panel', 'aria-label': title }, h('h2', null, title), ...children)
}
