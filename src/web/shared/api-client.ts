import { ApiError } from './api-error.ts'

/**
 * The one way the browser apps call the API: JSON in and out, the credential as a Bearer token, a
 * fresh Idempotency-Key on changes that ask for one, and every refusal as an ApiError in the service's
 * words. Each app makes its own client with its base path and where its credential comes from.
 */
export interface ApiClientOptions {
  /** Prepended to every path: '/api/v1' (portal) or '/api/v1/admin' (console). */
  base: string
  /** The stored credential, or null when signed out. */
  credential: () => string | null
  /** What a call that needs a credential fails with when there is none (the app then signs out). */
  signedOut: () => ApiError
  /** Whether a method's calls carry an Idempotency-Key unless a call says otherwise. */
  idempotentByDefault: (method: string) => boolean
}

export interface CallOptions {
  body?: unknown
  /** A file sent as the body as it is (an import's CSV), with its media type; instead of `body`. */
  file?: { blob: Blob; type: string }
  /** Send the stored credential (default true); a 401 then ends the session. */
  auth?: boolean
  /** Try this credential instead of the stored one (sign-in with a key): a 401 then does not sign out. */
  credential?: string
  /** A fresh key makes a double submit or a retried request harmless. */
  idempotent?: boolean
}

export interface ApiClient {
  call<T>(method: string, path: string, options?: CallOptions): Promise<T>
  /** A file the API answers (a CSV export), with the name its Content-Disposition gives; refusals as call's. */
  download(path: string, options?: CallOptions): Promise<{ blob: Blob; filename: string | null }>
  /** Called when the service refuses the stored credential (401): the app signs out and shows sign-in. */
  setUnauthorizedHandler(handler: (error: ApiError) => void): void
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  let onUnauthorized: (error: ApiError) => void = () => {}

  /** Sends the request with the credential; answers the response when it is a success, else throws its ApiError. */
  async function send(method: string, path: string, callOptions: CallOptions, accept: string): Promise<Response> {
    const headers: Record<string, string> = { accept }
    if (callOptions.file) headers['content-type'] = callOptions.file.type
    else if (callOptions.body !== undefined) headers['content-type'] = 'application/json'
    // Only a 401 of the stored credential signs out; a key being tried or an anonymous call does not.
    const stored = (callOptions.auth ?? true) && callOptions.credential === undefined
    if (callOptions.credential !== undefined) headers.authorization = `Bearer ${callOptions.credential}`
    else if (stored) {
      const credential = options.credential()
      if (!credential) {
        const error = options.signedOut()
        onUnauthorized(error)
        throw error
      }
      headers.authorization = `Bearer ${credential}`
    }
    if (callOptions.idempotent ?? options.idempotentByDefault(method)) headers['idempotency-key'] = randomKey()

    let response: Response
    try {
      response = await fetch(`${options.base}${path}`, {
        method,
        headers,
        body: callOptions.file ? callOptions.file.blob : callOptions.body === undefined ? null : JSON.stringify(callOptions.body),
        credentials: 'omit',
        cache: 'no-store',
      })
    } catch {
      throw new ApiError(0, 'network_error', 'The service could not be reached. Check your connection and try again.')
    }
    if (response.ok) return response
    const problem = (parsed(await response.text()) ?? {}) as { detail?: string; title?: string; code?: string; errors?: { path: string; message: string }[] }
    const detail = problem.detail || problem.title || `The service answered ${response.status}.`
    const error = new ApiError(response.status, problem.code ?? 'http_error', detail, Array.isArray(problem.errors) ? problem.errors : [])
    if (response.status === 401 && stored) onUnauthorized(error)
    throw error
  }

  async function call<T>(method: string, path: string, callOptions: CallOptions = {}): Promise<T> {
    const response = await send(method, path, callOptions, 'application/json')
    if (response.status === 204) return undefined as T
    return parsed(await response.text()) as T
  }

  async function download(path: string, callOptions: CallOptions = {}): Promise<{ blob: Blob; filename: string | null }> {
    const response = await send('GET', path, callOptions, 'text/csv, application/problem+json')
    const disposition = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')
    return { blob: await response.blob(), filename: disposition?.[1] ?? null }
  }

  return {
    call,
    download,
    setUnauthorizedHandler: (handler) => {
      onUnauthorized = handler
    },
  }
}

/** A JSON body, or null when there is none or it is not JSON. */
function parsed(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null
  } catch {
    return null
  }
}

/** 128 random bits as hex; getRandomValues also works on plain-http origins, where randomUUID does not exist. */
function randomKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** A query string from the parameters that have a value ('' and null are left out). */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== '') search.set(name, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}

export const enc = encodeURIComponent

/** Every page of a list, up to `max` rows. */
export async function all<T>(read: (cursor: string | null) => Promise<{ data: T[]; next_cursor: string | null }>, max = 1000): Promise<T[]> {
  const rows: T[] = []
  let cursor: string | null = null
  do {
    const page: { data: T[]; next_cursor: string | null } = await read(cursor)
    rows.push(...page.data)
    cursor = page.next_cursor
  } while (cursor && rows.length < max)
  return rows
}
