import type { Router } from './router.ts'

/** What the sign-in page says on arrival (why the session ended, or that sign-out worked). */
export interface SignInMessage {
  text: string
  kind: 'info' | 'error'
}

/**
 * The page shell both apps share (index.html gives it #main, the #notice live region and the
 * .skip-link): one render at a time, the title and the focus after each page, and messages read
 * out by screen readers. Each app extends it with its own header and session.
 */
export class Shell {
  readonly main = document.getElementById('main') as HTMLElement
  private readonly notice = document.getElementById('notice') as HTMLElement
  private renderSeq = 0
  private noticeTimer: ReturnType<typeof setTimeout> | undefined
  private flash: string | null = null
  /** For the sign-in page to show once, then clear. */
  signInMessage: SignInMessage | null = null

  /** The end of every tab title (the store's name, or the app's); each app says. */
  protected titleSuffix(): string {
    return ''
  }

  /** Starts a new page; `isCurrent()` of an older one turns false so its late answers are dropped. */
  beginRender(): () => boolean {
    const seq = ++this.renderSeq
    this.clearNotice()
    return () => seq === this.renderSeq
  }

  /** The view's title in the tab, the focus on its main heading, any flash message read out. */
  finishRender(title: string, { focus = true }: { focus?: boolean } = {}): void {
    const suffix = this.titleSuffix()
    document.title = suffix ? `${title} · ${suffix}` : title
    const flash = this.takeFlash()
    if (flash) this.announce(flash)
    if (focus) this.focusHeading()
  }

  focusHeading(): void {
    const heading = this.main.querySelector('h1')
    if (heading) {
      heading.setAttribute('tabindex', '-1')
      heading.focus()
    } else {
      this.main.focus()
    }
  }

  /**
   * After a page's data arrived and replaced its placeholder heading: the new heading takes the focus,
   * unless the user has moved it elsewhere meanwhile (never steal the focus from where they are).
   */
  refocusHeading(): void {
    const active = document.activeElement
    if (!active || active === document.body || active === this.main || (active.tagName === 'H1' && this.main.contains(active)) || !document.contains(active)) this.focusHeading()
  }

  /** A status message in the live region; `focus` moves the focus to it. */
  announce(text: string, { kind = 'info', focus = false }: { kind?: 'info' | 'error'; focus?: boolean } = {}): void {
    this.notice.textContent = ''
    // A fresh text node after clearing, so the same words twice are still announced.
    clearTimeout(this.noticeTimer)
    this.noticeTimer = setTimeout(() => {
      this.notice.textContent = text
      this.notice.className = `notice visible ${kind}`
      if (focus) this.notice.focus()
    }, 50)
  }

  /** A message for the next page shown. */
  flashNext(text: string): void {
    this.flash = text
  }

  /** The pending flash message, taken (for pages that refresh in place). */
  takeFlash(): string | null {
    const text = this.flash
    this.flash = null
    return text
  }

  clearNotice(): void {
    clearTimeout(this.noticeTimer)
    this.notice.textContent = ''
    this.notice.className = 'notice'
  }

  /** Wires the router and the skip link, then shows the page of the address bar. */
  start(router: Router, render: () => Promise<void>): void {
    document.addEventListener('click', (event) => router.onLinkClick(event))
    // The skip link: focus the page's main heading rather than jumping the address to #main.
    document.querySelector('.skip-link')?.addEventListener('click', (event) => {
      event.preventDefault()
      this.focusHeading()
    })
    router.start(() => void render())
    void render()
  }
}
