/**
 * Routes kept in the address bar with the History API, under one root (/portal, /console). Each app
 * parses its own routes; this moves between them.
 */
export interface Router {
  readonly root: string
  /** Starts listening for back/forward; `onChange` renders the route of the address bar. */
  start(onChange: () => void): void
  navigate(path: string, options?: { replace?: boolean }): void
  /** Changes the address without rendering (to drop a sign-in token from it). */
  rewriteAddress(path: string): void
  /**
   * For a document click listener: a real link (middle click, copy address and the keyboard work)
   * whose plain activation stays inside the app.
   */
  onLinkClick(event: MouseEvent): void
}

export function createRouter(root: string): Router {
  let listener: () => void = () => {}
  let current = ''
  const here = () => location.pathname + location.search

  function navigate(path: string, { replace = false }: { replace?: boolean } = {}): void {
    if (replace) history.replaceState(null, '', path)
    else history.pushState(null, '', path)
    current = here()
    listener()
  }

  return {
    root,
    start(onChange) {
      listener = onChange
      current = here()
      window.addEventListener('popstate', () => {
        // A fragment jump (the skip link) is not a new page.
        if (here() === current) return
        current = here()
        listener()
      })
    },
    navigate,
    rewriteAddress(path) {
      history.replaceState(null, '', path)
      current = here()
    },
    onLinkClick(event) {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      const anchor = (event.target as Element | null)?.closest?.('a')
      if (!anchor || anchor.target || anchor.hasAttribute('download')) return
      const url = new URL(anchor.href, location.href)
      if (url.origin !== location.origin || !(url.pathname === root || url.pathname.startsWith(`${root}/`))) return
      const samePage = url.pathname === location.pathname && url.search === location.search
      // A link to a place on this page is the browser's to follow.
      if (samePage && url.hash) return
      event.preventDefault()
      // The page's own link shows it afresh without a second history entry.
      if (samePage) listener()
      else navigate(url.pathname + url.search)
    },
  }
}
