import autocannon from 'autocannon'

export interface LoadSettings {
  connections: number
  pipelining: number
  durationSeconds: number
  warmupSeconds: number
}

export interface LoadResult {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  total: number
  /** Responses outside 2xx: the load must not be answered with errors or rate-limit refusals. */
  non2xx: number
  /** Connection errors and timeouts. */
  errors: number
  /**
   * The server's CPU time per request in microseconds: unlike requests/s it barely moves when other
   * work shares the machine, so it is the figure to compare changes by. Undefined when unmeasurable.
   */
  serverCpuMicros: number | undefined
}

/**
 * Loads one URL: an unmeasured warm-up (JIT, caches, pools), then the measured run. serverCpuSeconds
 * reads the server process's CPU time so far; headers go with every request (e.g. Authorization), or,
 * given a list, each request goes with a set picked at random (many users' credentials, in no order
 * the connections share).
 */
export async function measure(
  url: string,
  settings: LoadSettings,
  serverCpuSeconds: () => number | undefined = () => undefined,
  headers?: Record<string, string> | Array<Record<string, string>>,
): Promise<LoadResult> {
  const path = new URL(url).pathname + new URL(url).search
  const pick = (sets: Array<Record<string, string>>) => sets[Math.floor(Math.random() * sets.length)]!
  const perRequest = Array.isArray(headers)
    ? { requests: [{ method: 'GET', path, setupRequest: (request: object) => ({ ...request, headers: pick(headers) }) }] }
    : headers ? { headers } : {}
  const options = { url, connections: settings.connections, pipelining: settings.pipelining, ...perRequest }
  if (settings.warmupSeconds > 0) await autocannon({ ...options, duration: settings.warmupSeconds })
  const cpuBefore = serverCpuSeconds()
  const result = await autocannon({ ...options, duration: settings.durationSeconds })
  const cpuAfter = serverCpuSeconds()
  const cpuUsed = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    serverCpuMicros: cpuUsed === undefined || result.requests.total === 0 ? undefined : (cpuUsed * 1e6) / result.requests.total,
  }
}
