/** Time as the domain sees it; injected so tests and test-mode stores can move it. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that stands still until told to move: for tests. */
export function fixedClock(start: Date | string): Clock & { set(to: Date | string): void; advance(ms: number): void } {
  let current = new Date(start)
  return {
    now: () => new Date(current),
    set: (to) => {
      current = new Date(to)
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms)
    },
  }
}
