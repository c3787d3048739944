import { api } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { confirmAction } from '../../shared/confirm.ts'
import { h, replaceChildren, uid } from '../../shared/dom.ts'
import { dateTime, number, percent } from '../format.ts'
import { paths } from '../router.ts'
import { mayChange } from '../session.ts'
import type { Import, ImportFormat, Store } from '../types.ts'
import { badge, errorBox, field, loading, pageHeader, section, table } from '../ui.ts'

const TITLE = 'Import subscriptions'

const FORMATS: [ImportFormat, string, string][] = [
  ['recharge', 'Recharge', "Recharge's migration template or its purchase-items export."],
  ['native', "This service's export", 'The subscriptions export of this service (from another store, say).'],
]
const FORMAT_LABEL = Object.fromEntries(FORMATS.map(([code, label]) => [code, label])) as Record<ImportFormat, string>
const STATUS: Record<Import['status'], [string, string]> = { running: ['Running', 'info'], completed: ['Completed', 'good'], failed: ['Stopped', 'bad'] }
/** How often a running import's progress is read while its upload is in flight. */
const POLL_MS = 1000

const plural = (n: number, one: string, many = `${one}s`) => `${number(n)} ${n === 1 ? one : many}`

/**
 * Imports from a CSV file (POST /admin/imports): choose a file and its format, check it (a dry run
 * that writes nothing but its report), then import the same file; the store's past imports below.
 * The page says the cutover order and whether the store's billing is on.
 */
export async function renderImport(app: ConsoleApp, isCurrent: () => boolean): Promise<void> {
  replaceChildren(app.main, pageHeader(TITLE), loading())
  app.finishRender(TITLE)
  let store: Store, past: Import[]
  try {
    ;[store, past] = await Promise.all([api.store(), api.imports().then((page) => page.data)])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader(TITLE), errorBox(error))
    return
  }
  if (!isCurrent()) return
  // The banner above the page and the line on it say the same about billing.
  app.useStore(store)

  const pastBox = h('div', null, pastImports(past))
  const refreshPast = async () => {
    const page = await api.imports().catch(() => null)
    if (page && isCurrent()) replaceChildren(pastBox, pastImports(page.data))
  }

  replaceChildren(
    app.main,
    pageHeader(TITLE, h('p', { class: 'subtitle' }, 'Subscriptions from another system, from a CSV file: checked first, then imported. Nothing is charged by an import.')),
    section('Switching from another system', ...cutover(store)),
    mayChange('full')
      ? section('Import a file', uploadForm(app, store, isCurrent, refreshPast))
      : section('Import a file', h('p', null, 'This key may only read: importing needs a full-access key.')),
    section('Past imports', pastBox),
  )
  app.refocusHeading()
}

/** The cutover order in two sentences, and whether the store bills now (`billing_enabled`). */
function cutover(store: Store): HTMLElement[] {
  const on = store.billing_enabled !== false
  return [
    h('p', { class: 'billing-state' }, badge(on ? 'Billing on' : 'Billing off', on ? 'warn' : 'info'), ' ', on ? 'Billing is on for this store: imported subscriptions renew on their dates.' : 'Billing is off for this store: nothing is charged until you switch it on.'),
    h(
      'p',
      null,
      'Switch billing off in ',
      h('a', { href: paths.settings }, 'Settings'),
      ' before you import, so that nothing is charged while subscriptions move. Then import the file, switch the old system off, and switch billing on in Settings: renewals that fell due meanwhile run once each.',
    ),
  ]
}

/**
 * The file, its format, Check file (the dry run) and, after a check that found rows to create, Import
 * N subscriptions with the same file. A progress bar while either runs; the report after.
 */
function uploadForm(app: ConsoleApp, store: Store, isCurrent: () => boolean, refreshPast: () => Promise<void>): HTMLElement {
  const fileInput = h('input', { type: 'file', name: 'file', accept: '.csv,text/csv' })
  const radios = FORMATS.map(([code, label, hint], index) => {
    const radio = h('input', { type: 'radio', name: 'format', value: code, id: `import-format-${code}`, checked: index === 0, 'aria-describedby': `import-format-${code}-hint` })
    return { radio, row: h('div', { class: 'field checkbox' }, radio, h('label', { for: radio.id }, label), h('p', { class: 'hint', id: `import-format-${code}-hint` }, hint)) }
  })
  const format = () => (radios.find((r) => r.radio.checked)?.radio.value ?? 'recharge') as ImportFormat
  const checkButton = h('button', { type: 'submit', class: 'button primary' }, 'Check file')
  const formStatus = h('div', { class: 'form-status' })
  const progress = progressBar()
  const report = h('div', { class: 'import-report' })
  const form = h(
    'form',
    { class: 'import-form', novalidate: true },
    field('CSV file', fileInput, { hint: 'The first row names the columns. Up to 512 MB.' }),
    h('fieldset', { class: 'switches' }, h('legend', null, 'Format'), radios.map((r) => r.row)),
    h('div', { class: 'button-row' }, checkButton),
    formStatus,
  )

  /** The check this report is of: the import button sends that same file in that same format. */
  let checked: { file: File; format: ImportFormat } | null = null
  let busy = false
  // A report describes the file and format it was made for: choosing others sets it aside.
  const forget = () => {
    if (busy) return
    checked = null
    replaceChildren(report)
    replaceChildren(formStatus)
  }
  fileInput.addEventListener('change', forget)
  for (const { radio } of radios) radio.addEventListener('change', forget)

  const setBusy = (value: boolean) => {
    busy = value
    for (const control of [fileInput, checkButton, ...radios.map((r) => r.radio), ...report.querySelectorAll('button')]) (control as HTMLInputElement | HTMLButtonElement).disabled = value
    report.setAttribute('aria-busy', String(value))
  }

  async function run(file: File, chosen: ImportFormat, dryRun: boolean): Promise<void> {
    setBusy(true)
    replaceChildren(formStatus)
    progress.start(`${dryRun ? 'Checking' : 'Importing'} ${file.name}`)
    app.announce(dryRun ? `Checking ${file.name}…` : `Importing ${file.name}…`)
    // Closing the tab mid-upload stops the import where it was read up to: the browser asks first.
    const stay = (event: BeforeUnloadEvent) => event.preventDefault()
    window.addEventListener('beforeunload', stay)
    try {
      const result = await importWithProgress(file, chosen, dryRun, (view) => progress.show(view))
      if (!isCurrent()) return
      checked = dryRun && result.status === 'completed' ? { file, format: chosen } : null
      const heading = h('h3', { tabindex: -1 }, `${dryRun ? 'Check' : 'Import'} of ${file.name}`)
      replaceChildren(report, reportView(heading, result, checked ? () => void confirmImport(result.created) : null))
      heading.focus()
      app.announce(summary(result))
    } catch (error) {
      if (!isCurrent()) return
      checked = null
      replaceChildren(report)
      replaceChildren(formStatus, errorBox(error))
      app.announce(`Refused: ${(formStatus.textContent ?? '').trim()}`, { kind: 'error' })
    } finally {
      window.removeEventListener('beforeunload', stay)
      progress.stop()
      setBusy(false)
    }
    if (!report.hasChildNodes()) checkButton.focus()
    await refreshPast()
  }

  async function confirmImport(count: number): Promise<void> {
    if (!checked || busy) return
    const billingOn = store.billing_enabled !== false
    const confirmed = await confirmAction({
      title: `Import ${plural(count, 'subscription')}?`,
      body: [
        h('p', null, `${checked.file.name} is read again and its rows created as subscriptions. Nothing is charged now: each renews on its next charge date. Rows already imported are skipped, so the same file twice imports each row once.`),
        billingOn ? h('p', null, h('strong', null, 'Billing is on for this store:'), ' the imported subscriptions renew on their dates, so make sure the old system no longer charges them, or switch billing off in Settings first.') : null,
      ],
      confirmLabel: `Import ${plural(count, 'subscription')}`,
    })
    if (!confirmed || !checked) return
    await run(checked.file, checked.format, false)
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (busy) return
    const file = fileInput.files?.[0]
    if (!file) {
      replaceChildren(formStatus, h('p', { class: 'error-box', role: 'alert' }, 'Choose a CSV file first.'))
      fileInput.focus()
      return
    }
    void run(file, format(), true)
  })

  return h('div', null, form, progress.element, report)
}

/**
 * Runs an import and reports its progress meanwhile. The POST answers only once the whole file is
 * read, so while it is in flight the page reads the store's newest import every second: a running one
 * of this format and kind that was not the newest before this upload began is this one, then read by
 * its id. (Another import started at the same instant could be taken for it until then; the answer
 * is always this one's.) The service records progress every 500 rows, so a big file's bar moves.
 */
async function importWithProgress(file: File, format: ImportFormat, dryRun: boolean, onProgress: (view: Import) => void): Promise<Import> {
  const before = await api.imports(1).then((page) => page.data[0]?.id ?? null, () => null)
  let id: string | null = null
  let running = true
  let timer: ReturnType<typeof setTimeout> | undefined
  const poll = async () => {
    try {
      const view = id ? await api.import(id) : (await api.imports(1)).data[0]
      if (running && view && (id !== null || (view.id !== before && view.status === 'running' && view.format === format && view.dry_run === dryRun))) {
        id = view.id
        onProgress(view)
      }
    } catch {
      // One reading missed: the next one tries again, and the upload's answer is what counts.
    }
    if (running) timer = setTimeout(() => void poll(), POLL_MS)
  }
  timer = setTimeout(() => void poll(), POLL_MS)
  try {
    return await api.createImport(file, format, dryRun)
  } finally {
    running = false
    clearTimeout(timer)
  }
}

/** A labelled <progress>: indeterminate until the service says how far it has read. */
function progressBar(): { element: HTMLElement; start(label: string): void; show(view: Import): void; stop(): void } {
  const id = uid('import-progress')
  const label = h('label', { for: id })
  const bar = h('progress', { id, max: 1 })
  const detail = h('p', { class: 'hint' })
  const element = h('div', { class: 'import-progress', hidden: true }, label, bar, detail)
  return {
    element,
    start(text) {
      label.textContent = text
      bar.removeAttribute('value')
      detail.textContent = 'Sending the file…'
      element.hidden = false
    },
    show(view) {
      if (view.progress === null) bar.removeAttribute('value')
      else bar.value = view.progress
      detail.textContent = `${plural(view.rows, 'row')} read${view.progress === null ? '' : ` · ${percent(view.progress)} of the file`}`
    },
    stop() {
      element.hidden = true
    },
  }
}

/** What the live region says when a run ends. */
function summary(result: Import): string {
  const refused = result.failed ? `, ${plural(result.failed, 'row')} refused` : ''
  if (result.status === 'failed') return `The ${result.dry_run ? 'check' : 'import'} stopped after ${plural(result.rows, 'row')}${refused}.`
  return result.dry_run
    ? `Checked ${plural(result.rows, 'row')}: ${number(result.created)} would be created, ${number(result.skipped)} already imported${refused}.`
    : `Imported ${plural(result.created, 'subscription')}; ${number(result.skipped)} already imported${refused}.`
}

/** The report of one run: its counts, ignored columns, refused rows, and what to do next. */
function reportView(heading: HTMLElement, result: Import, importNow: (() => void) | null): HTMLElement {
  const figures: [string, number][] = [
    ['Rows', result.rows],
    [result.dry_run ? 'Would create' : 'Created', result.created],
    ['Already imported (skipped)', result.skipped],
    ['Refused', result.failed],
  ]
  const next = result.dry_run
    ? result.status !== 'completed'
      ? null
      : importNow && result.created > 0
        ? h('div', { class: 'button-row' }, h('button', { type: 'button', class: 'button primary', onclick: importNow }, `Import ${plural(result.created, 'subscription')}`))
        : h('p', null, 'Nothing to import: every row is refused or already imported.')
    : result.created > 0
      ? h('p', null, h('a', { href: paths.subscriptions() }, 'See the subscriptions'))
      : null
  return h(
    'div',
    null,
    heading,
    result.status === 'failed'
      ? h('p', { class: 'error-box' }, `The file stopped being readable after ${plural(result.rows, 'row')} (the last refused row says why). ${result.dry_run ? 'Check it again once it is fixed.' : 'The rows before were imported: import the same file again to import the rest.'}`)
      : null,
    h('dl', { class: 'import-figures' }, figures.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, number(value))))),
    h('p', null, result.ignored_columns.length ? `Columns not read: ${result.ignored_columns.join(', ')}.` : 'Every column was read.'),
    result.errors.length
      ? [
          h('div', { class: 'import-table refused-rows' }, table(`Refused rows (${number(result.failed)})`, ['Row', 'Column', 'Code', 'Detail'], result.errors.map((e) => [String(e.row), e.column ?? '—', h('code', null, e.code), e.detail]))),
          result.failed > result.errors.length ? h('p', { class: 'hint' }, `The first ${number(result.errors.length)} refused rows are listed.`) : null,
          result.dry_run ? h('p', { class: 'hint' }, 'Refused rows are left out of the import: fix them in the file and import it again later (rows already imported are skipped).') : null,
        ]
      : null,
    next,
  )
}

/** The store's imports, newest first: when, which format, check or import, status and counts. */
function pastImports(imports: Import[]): HTMLElement {
  if (imports.length === 0) return h('p', null, 'No imports yet.')
  return h(
    'div',
    { class: 'import-table' },
    table(
      'Past imports, newest first',
      ['Started', 'Format', 'Dry run', 'Status', 'Rows', 'Created', 'Skipped', 'Refused'],
      imports.map((i) => {
        const [label, tone] = STATUS[i.status]
        return [
          dateTime(i.created_at),
          FORMAT_LABEL[i.format],
          i.dry_run ? 'Yes' : 'No',
          badge(i.status === 'running' && i.progress !== null ? `${label} · ${percent(i.progress)}` : label, tone),
          number(i.rows),
          number(i.created),
          number(i.skipped),
          number(i.failed),
        ]
      }),
      { captionHidden: true },
    ),
    h('p', { class: 'hint' }, `The ${imports.length === 1 ? 'latest' : `${number(imports.length)} latest`}. A dry run's Created is what the import would have created; it wrote nothing.`),
  )
}
