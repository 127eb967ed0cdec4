// Refused sign-ins are counted per client address and per credential prefix (the token's
// first `prefix_chars` characters: its kind and 8 random ones, never the whole token). After
// `refusals` refusals of one key within `windowMs`, sign-in with that key is refused (429)
// until the oldest of them is `windowMs` old. A successful sign-in is not counted. Memory is
// bounded: at most `keysMax` keys with at most `refusals` times each; when full, expired keys
// go first, then the key refused longest ago.

export interface ThrottleLimits {
  /** Refusals of one key within the window that close sign-in to it (default 5). */
  refusals: number
  /** The window (default 5 minutes). */
  windowMs: number
  /** Keys remembered at once (default 10,000). */
  keysMax: number
}

export const throttle_limits_default: ThrottleLimits = {
  refusals: 5,
  windowMs: 5 * 60_000,
  keysMax: 10_000,
}

/** How much of a token keys its throttle: `opk_` and 8 random characters. */
export const prefix_chars = 12

/** The keys a sign-in attempt is counted under: its address and its credential's prefix. */
export function throttleKeys(address: string | undefined, token: string): string[] {
  const plain = (address ?? 'unknown').replace(/^::ffff:/, '')
  return [`address ${plain}`, `prefix ${token.slice(0, prefix_chars)}`]
}

export class SignInThrottle {
  /** Each key's refusal times, oldest first; a key refused again moves to the map's end. */
  private readonly refused = new Map<string, number[]>()

  constructor(
    private readonly limits: ThrottleLimits = throttle_limits_default,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until any of these keys may sign in again; 0 when all may now. */
  waitMs(keys: string[]): number {
    const at = this.now()
    let wait = 0
    for (const key of keys) {
      const times = this.live(key, at)
      if (times.length >= this.limits.refusals) {
        wait = Math.max(wait, times[0]! + this.limits.windowMs - at)
      }
    }
    return wait
  }

  /** Counts a refused sign-in under each key. */
  refuse(keys: string[]): void {
    const at = this.now()
    for (const key of keys) {
      const times = this.live(key, at)
      times.push(at)
      if (times.length > this.limits.refusals) times.shift()
      this.refused.delete(key)
      this.makeRoom(at)
      this.refused.set(key, times)
    }
  }

  get size(): number {
    return this.refused.size
  }

  /** The key's refusal times still inside the window. */
  private live(key: string, at: number): number[] {
    const times = this.refused.get(key) ?? []
    while (times.length > 0 && times[0]! <= at - this.limits.windowMs) times.shift()
    return times
  }

  private makeRoom(at: number): void {
    if (this.refused.size < this.limits.keysMax) return
    for (const [key, times] of this.refused) {
      if (times.length === 0 || times.at(-1)! <= at - this.limits.windowMs) {
        this.refused.delete(key)
      }
    }
    while (this.refused.size >= this.limits.keysMax) {
      const oldest = this.refused.keys().next().value
      if (oldest === undefined) break
      this.refused.delete(oldest)
    }
  }
}
