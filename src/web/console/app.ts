import { api, ApiError } from './api.ts'
import { h, replaceChildren } from '../shared/dom.ts'
import { Shell, type SignInMessage } from '../shared/shell.ts'
import { dateTime, setStoreClock, useStore } from './format.ts'
import { navigate, paths, ROOT } from './router.ts'
import { clearKey, credentialScope, currentKey, setCredentialScope, signedInVia } from './session.ts'
import type { Store } from './types.ts'

const NAV: { href: string; label: string; match: (path: string) => boolean }[] = [
  { href: paths.overview, label: 'Overview', match: (p) => p === ROOT },
  { href: paths.subscriptions(), label: 'Subscriptions', match: (p) => p.startsWith(`${ROOT}/subscriptions`) },
  { href: paths.attention, label: 'Needs attention', match: (p) => p.startsWith(paths.attention) },
  { href: paths.catalogue, label: 'Catalogue', match: (p) => p.startsWith(paths.catalogue) },
  { href: paths.discounts, label: 'Discounts', match: (p) => p.startsWith(paths.discounts) },
  { href: paths.webhooks, label: 'Webhooks', match: (p) => p.startsWith(paths.webhooks) },
  { href: paths.import, label: 'Import', match: (p) => p.startsWith(paths.import) },
  { href: paths.bulkChanges, label: 'Bulk changes', match: (p) => p.startsWith(paths.bulkChanges) },
  { href: paths.settings, label: 'Settings', match: (p) => p.startsWith(paths.settings) },
]

/** The shared page shell, with the console's header (store, mode, navigation) and signed-in store. */
class ConsoleApp extends Shell {
  private readonly nav = document.getElementById('nav') as HTMLElement
  private readonly storeName = document.getElementById('store-name') as HTMLElement
  private readonly storeMode = document.getElementById('store-mode') as HTMLElement
  private readonly account = document.getElementById('account') as HTMLElement
  private readonly billingOff = document.getElementById('billing-off') as HTMLElement
  private storePromise: Promise<Store> | null = null
  private credentialPromise: Promise<void> | null = null
  store: Store | null = null

  protected override titleSuffix(): string {
    return this.store?.name ?? 'Merchant console'
  }

  /** What the signed-in credential may do, read once per sign-in: pages hide what it cannot (the header names a narrower key). */
  loadCredential(): Promise<void> {
    if (!this.credentialPromise) {
      this.credentialPromise = api.credential().then(
        (credential) => {
          setCredentialScope(credential.scope)
          this.renderChrome()
        },
        () => {
          this.credentialPromise = null
        },
      )
    }
    return this.credentialPromise
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
    // The credential's scope with the store, before any page draws its forms.
    return Promise.all([this.storePromise, this.loadCredential()]).then(([store]) => store)
  }

  useStore(store: Store): void {
    this.store = store
    this.storePromise = Promise.resolve(store)
    useStore(store)
    this.storeName.textContent = store.name
    this.storeMode.textContent = store.mode === 'test' ? 'Test mode' : ''
    this.storeMode.hidden = store.mode !== 'test'
    this.renderBillingOff()
    // In the store's zone, which may have just changed.
    this.renderClock()
  }

  /**
   * On every page while the merchant has switched billing off (the cutover switch, Settings): a store
   * left off by mistake charges nobody, so the console says so until it is turned on. Follows the
   * store as it was last read or saved.
   */
  private renderBillingOff(): void {
    const off = currentKey() !== null && this.store?.billing_enabled === false
    this.billingOff.hidden = !off
    if (!off) return this.billingOff.replaceChildren()
    replaceChildren(
      this.billingOff,
      h('p', null, h('strong', null, 'Billing is off for this store:'), ' nothing is charged, retried or reminded. Turn it on in ', h('a', { href: paths.settings }, 'Settings'), ' when the old system is off.'),
    )
  }

  /**
   * A test store's clock beside "Test mode", read with each page: every time the console shows for the
   * store (subscriptions, emails, webhooks, keys) is on it, while a failed webhook's retry waits in real time.
   */
  showClock(): void {
    if (this.store?.mode !== 'test') return setStoreClock(null)
    void api.testClock().then(
      (clock) => {
        this.clock = clock
        setStoreClock(clock.follows_real_time ? null : clock.now)
        this.renderClock()
      },
      () => {},
    )
  }

  private clock: { now: string; follows_real_time: boolean } | null = null

  private renderClock(): void {
    const clock = this.clock
    if (this.store?.mode !== 'test' || !clock) return
    this.storeMode.textContent = clock.follows_real_time ? 'Test mode' : `Test mode · clock ${dateTime(clock.now)}`
    this.storeMode.title = clock.follows_real_time ? 'The test clock follows real time until it is advanced.' : "The store's test clock: the times shown for this store are on it."
  }

  /** The navigation, with the current section marked for assistive technology. */
  renderChrome(): void {
    if (!currentKey()) {
      this.nav.hidden = true
      this.nav.replaceChildren()
      this.account.replaceChildren()
      this.storeName.textContent = ''
      this.storeMode.textContent = ''
      this.renderBillingOff()
      return
    }
    this.nav.hidden = false
    const path = location.pathname.replace(/\/+$/, '') || ROOT
    replaceChildren(
      this.nav,
      h('ul', { class: 'nav-list' }, NAV.map((item) => h('li', null, h('a', { href: item.href, 'aria-current': item.match(path) ? 'page' : null }, item.label)))),
    )
    const narrow = credentialScope() === 'read_only' ? 'Read-only key' : credentialScope() === 'support' ? 'Support key' : null
    replaceChildren(this.account, narrow ? h('span', { class: 'badge info', title: 'Changes this key may not make are not offered' }, narrow) : null, h('button', { type: 'button', class: 'button link-button', onclick: () => void this.signOut() }, 'Sign out'))
  }

  /** Back to sign-in: the key was refused (revoked meanwhile) or the merchant signed out. */
  endSession(message: SignInMessage): void {
    clearKey()
    sessionStorage.clear()
    this.store = null
    this.storePromise = null
    this.credentialPromise = null
    setCredentialScope('full')
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

  async signOut(): Promise<void> {
    setCredentialScope('full')
    // A session from the control panel is ended on the server first, so the token is worthless even if
    // copied; the tab forgets it whatever the answer (an ended or expired one is 401 already).
    const token = currentKey()
    if (signedInVia() === 'platform' && token) await api.signOutConsoleSession(token).catch(() => undefined)
    clearKey()
    sessionStorage.clear()
    this.store = null
    this.storePromise = null
    this.credentialPromise = null
    this.signInMessage = { text: 'You have signed out. The credential was removed from this tab.', kind: 'info' }
    navigate(ROOT)
  }
}

export const app = new ConsoleApp()
export type { ConsoleApp }
