// autocannon ships no types; this declares the part of its programmatic API the bench scripts use.
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    pipelining?: number
    /** Seconds. */
    duration?: number
    /** Seconds before a request counts as timed out. */
    timeout?: number
    headers?: Record<string, string>
    method?: string
    body?: string
    /** Sent in turn by each connection, instead of one request repeated. */
    requests?: Array<{ method?: string; path?: string; headers?: Record<string, string>; body?: string; setupRequest?: (request: object) => object }>
  }

  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p90: number
    p97_5: number
    p99: number
  }

  interface Result {
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    resets: number
    '2xx': number
    statusCodeStats: Record<string, { count: number }>
    /** Milliseconds per request. */
    latency: Histogram
    /** Requests per one-second sample. */
    requests: Histogram & { sent: number }
    throughput: Histogram
  }

  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
