import { append, type Child } from './dom.ts'

export interface Confirmation {
  title: string
  body: Child[]
  confirmLabel: string
  backLabel?: string
  /** Destructive: the "go back" button gets the focus, so a stray Enter changes nothing. */
  danger?: boolean
}

/**
 * Asks before anything changes, in a modal <dialog>: it keeps the focus inside, Escape goes back, and
 * the focus returns to the control that opened it.
 */
export function confirmAction(confirmation: Confirmation): Promise<boolean> {
  const dialog = document.getElementById('confirm') as HTMLDialogElement
  const title = document.getElementById('confirm-title')!
  const text = document.getElementById('confirm-text')!
  const yes = document.getElementById('confirm-yes') as HTMLButtonElement
  const no = document.getElementById('confirm-no') as HTMLButtonElement
  title.textContent = confirmation.title
  text.replaceChildren()
  append(text, confirmation.body)
  yes.textContent = confirmation.confirmLabel
  yes.className = confirmation.danger ? 'button danger' : 'button primary'
  no.textContent = confirmation.backLabel ?? 'Go back'
  dialog.returnValue = ''
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true })
    dialog.showModal()
    ;(confirmation.danger ? no : yes).focus()
  })
}
