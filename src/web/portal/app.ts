import { api, ApiError } from './api.ts'
import { h, replaceChildren } from '../shared/dom.ts'
import { Shell, type SignInMessage } from '../shared/shell.ts'
import { navigate, ROOT, signInPath } from './router.ts'
import { clearSession, currentSession, type Session } from './session.ts'
import type { PortalStore, Subscriber } from './types.ts'
import { useStoreZone } from './format.ts'

/** The shared page shell, with the portal's header (the store's name, the account) and session. */
class PortalApp extends Shell {
  private readonly storeName = document.getElementById('store-name') as HTMLElement
  private readonly account = document.getElementById('account') as HTMLElement

  private expiryTimer: ReturnType<typeof setTimeout> | undefined
  private profile: Promise<Subscriber> | null = null
  private store: Promise<PortalStore | null> | null = null
  private subscriber: Subscriber | null = null
  private storeTitle = 'Subscriptions'
  private storeFor: string | null = null
  private signingOut = false
  /** The store of the last page shown: where sign-in goes back to. */
  storeHash: string | null = null
  /** The one-time sign-in token read from the address bar, kept in memory only. */
  pendingToken: string | null = null

  protected override titleSuffix(): string {
    return this.storeTitle
  }

  /** The header's store name: from `?store=` before sign-in, from the profile after. */
  async showStore(storeHash: string | null): Promise<string | null> {
    if (storeHash && storeHash === this.storeFor) return this.storeTitle
    this.storeHash = storeHash ?? this.storeHash
    if (!storeHash) return null
    try {
      const store = await api.storefrontStore(storeHash)
      this.storeFor = storeHash
      this.storeTitle = store.name
      this.storeName.textContent = store.name
      return store.name
    } catch {
      return null
    }
  }

  get storeDisplayName(): string {
    return this.storeFor ? this.storeTitle : 'the store'
  }

  /** The signed-in subscriber, read once per session. */
  me(): Promise<Subscriber> {
    if (!this.profile) {
      this.profile = api.me()
      this.profile.then(
        (subscriber) => {
          this.subscriber = subscriber
          this.storeHash = subscriber.store_hash
          void this.showStore(subscriber.store_hash)
          this.renderAccount()
        },
        () => {
          this.profile = null
        },
      )
    }
    return this.profile
  }

  /** The subscriber's store (clock, time zone, past-due days, cancellation reasons), read once per session; null when it cannot be read. */
  portalStore(): Promise<PortalStore | null> {
    if (!this.store) {
      this.store = api.portalStore().then(
        (store) => {
          // Every date of the portal on the store's calendar, as its emails and the console give them.
          useStoreZone(store.timezone)
          return store
        },
        () => {
          this.store = null
          return null
        },
      )
    }
    return this.store
  }

  /** The header's account area: who is signed in, and the way out. */
  renderAccount(): void {
    const subscriber = this.subscriber
    if (!currentSession()) {
      this.account.replaceChildren()
      return
    }
    replaceChildren(
      this.account,
      h(
        'ul',
        { class: 'account-list' },
        h('li', null, h('a', { href: ROOT }, 'Subscriptions')),
        subscriber ? h('li', { class: 'signed-in-as' }, h('span', { class: 'visually-hidden' }, 'Signed in as '), subscriber.email) : null,
        h('li', null, h('button', { type: 'button', class: 'button link-button', onclick: () => void this.signOut() }, 'Sign out')),
      ),
    )
  }

  /** After verify: the session is in sessionStorage and ends by itself when the token does. */
  startSession(session: Session): void {
    this.profile = null
    this.store = null
    this.subscriber = null
    this.scheduleExpiry(session)
  }

  scheduleExpiry(session: Session): void {
    clearTimeout(this.expiryTimer)
    if (session.expiresAt === null) return
    const remaining = session.expiresAt - Date.now()
    // setTimeout cannot wait longer than about 24.8 days; sessions are minutes long.
    this.expiryTimer = setTimeout(() => {
      this.endSession({ text: 'Your session has expired. For your security, sessions last 15 minutes: request a new sign-in link to continue.', kind: 'error' })
    }, Math.max(0, Math.min(remaining, 2 ** 31 - 1)))
  }

  /** Back to sign-in: the session ran out or the service refused it (401). */
  endSession(message: SignInMessage): void {
    if (this.signingOut) return
    clearTimeout(this.expiryTimer)
    clearSession()
    sessionStorage.clear()
    this.profile = null
    this.store = null
    this.subscriber = null
    this.signInMessage = message
    navigate(signInPath(this.storeHash), { replace: true })
  }

  handleUnauthorized(error: ApiError): void {
    const expired = error.code === 'session_expired'
    this.endSession({
      text: expired
        ? 'Your session has expired. For your security, sessions last 15 minutes: request a new sign-in link to continue.'
        : 'Your session has ended or is no longer valid. Request a new sign-in link to continue.',
      kind: 'error',
    })
  }

  async signOut(): Promise<void> {
    this.signingOut = true
    try {
      await api.logout()
    } catch {
      // Signed out here either way; the token also expires by itself.
    } finally {
      this.signingOut = false
    }
    clearTimeout(this.expiryTimer)
    sessionStorage.clear()
    this.profile = null
    this.store = null
    this.subscriber = null
    this.signInMessage = { text: 'You have signed out.', kind: 'info' }
    navigate(signInPath(this.storeHash))
  }
}

export const portal = new PortalApp()
export type { PortalApp }
