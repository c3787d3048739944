import { api, ApiError } from './api.ts'
import { h, replaceChildren } from '../shared/dom.ts'
import { useStore } from './format.ts'
import { navigate, paths, ROOT } from './router.ts'
import { clearKey, currentKey, signedInVia } from './session.ts'
import type { Store } from './types.ts'

export interface SignInMessage {
  text: string
  kind: 'info' | 'error'
}

const NAV: { href: string; label: string; match: (path: string) => boolean }[] = [
  { href: paths.overview, label: 'Overview', match: (p) => p === ROOT },
  { href: paths.subscriptions(), label: 'Subscriptions', match: (p) => p.startsWith(`${ROOT}/subscriptions`) },
  { href: paths.attention, label: 'Needs attention', match: (p) => p.startsWith(paths.attention) },
  { href: paths.catalogue, label: 'Catalogue', match: (p) => p.startsWith(paths.catalogue) },
  { href: paths.discounts, label: 'Discounts', match: (p) => p.startsWith(paths.discounts) },
  { href: paths.webhooks, label: 'Webhooks', match: (p) => p.startsWith(paths.webhooks) },
  { href: paths.settings, label: 'Settings', match: (p) => p.startsWith(paths.settings) },
]

/** The page shell and the signed-in store the views share. */
class ConsoleApp {
  readonly main = document.getElementById('main') as HTMLElement
  private readonly notice = document.getElementById('notice') as HTMLElement
  private readonly nav = document.getElementById('nav') as HTMLElement
  private readonly storeName = document.getElementById('store-name') as HTMLElement
  private readonly storeMode = document.getElementById('store-mode') as HTMLElement
  private readonly account = document.getElementById('account') as HTMLElement
  private renderSeq = 0
  private noticeTimer: ReturnType<typeof setTimeout> | undefined
  private storePromise: Promise<Store> | null = null
  store: Store | null = null
  signInMessage: SignInMessage | null = null
  private flash: string | null = null

  /** Starts a new page; `isCurrent()` of an older one turns false so its late answers are dropped. */
  beginRender(): () => boolean {
    const seq = ++this.renderSeq
    this.clearNotice()
    return () => seq === this.renderSeq
  }

  /** The view's title in the tab, the focus on its main heading, any flash message read out. */
  finishRender(title: string, { focus = true }: { focus?: boolean } = {}): void {
    document.title = `${title} · ${this.store?.name ?? 'Merchant console'}`
    if (this.flash) {
      this.announce(this.flash)
      this.flash = null
    }
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

  /** A status message in the live region (read out by screen readers). */
  announce(text: string, { kind = 'info' }: { kind?: 'info' | 'error' } = {}): void {
    this.notice.textContent = ''
    clearTimeout(this.noticeTimer)
    this.noticeTimer = setTimeout(() => {
      this.notice.textContent = text
      this.notice.className = `notice visible ${kind}`
    }, 50)
  }

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

  /** The signed-in store, read once per sign-in; sets the formats to its currency and time zone. */
  loadStore(): Promise<Store> {
    if (!this.storePromise) {
      this.storePromise = api.store()
      this.storePromise.then(
        (store) => this.useStore(store),
        () => {
          this.storePromise = null
        },
      )
    }
    return this.storePromise
  }

  useStore(store: Store): void {
    this.store = store
    this.storePromise = Promise.resolve(store)
    useStore(store)
    this.storeName.textContent = store.name
    this.storeMode.textContent = store.mode === 'test' ? 'Test mode' : ''
    this.storeMode.hidden = store.mode !== 'test'
  }

  /** The navigation, with the current section marked for assistive technology. */
  renderChrome(): void {
    if (!currentKey()) {
      this.nav.hidden = true
      this.nav.replaceChildren()
      this.account.replaceChildren()
      this.storeName.textContent = ''
      this.storeMode.textContent = ''
      return
    }
    this.nav.hidden = false
    const path = location.pathname.replace(/\/+$/, '') || ROOT
    replaceChildren(
      this.nav,
      h('ul', { class: 'nav-list' }, NAV.map((item) => h('li', null, h('a', { href: item.href, 'aria-current': item.match(path) ? 'page' : null }, item.label)))),
    )
    replaceChildren(this.account, h('button', { type: 'button', class: 'button link-button', onclick: () => this.signOut() }, 'Sign out'))
  }

  /** Back to sign-in: the key was refused (revoked meanwhile) or the merchant signed out. */
  endSession(message: SignInMessage): void {
    clearKey()
    sessionStorage.clear()
    this.store = null
    this.storePromise = null
    this.signInMessage = message
    navigate(location.pathname + location.search, { replace: true })
  }

  handleUnauthorized(_error: ApiError): void {
    this.endSession(
      signedInVia() === 'platform'
        ? { text: 'The session from the BigCommerce control panel has ended (it lasts an hour). Open the app again from the control panel, or sign in with an admin API key.', kind: 'error' }
        : { text: 'The admin API key is no longer accepted (it may have been revoked). Sign in with a valid key.', kind: 'error' },
    )
  }

  signOut(): void {
    clearKey()
    sessionStorage.clear()
    this.store = null
    this.storePromise = null
    this.signInMessage = { text: 'You have signed out. The credential was removed from this tab.', kind: 'info' }
    navigate(ROOT)
  }
}

export const app = new ConsoleApp()
export type { ConsoleApp }
