// Time comes from an injected clock so that tests and sandbox operators can move it
// (OTP expiry, clearing cycles, collection days) without sleeping.

export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that stands still until moved; used by tests and the sandbox. */
export class ManualClock implements Clock {
  private ms: number
  constructor(start: Date | string = new Date()) {
    this.ms = new Date(start).getTime()
  }
  now(): Date {
    return new Date(this.ms)
  }
  set(at: Date | string): void {
    this.ms = new Date(at).getTime()
  }
  advance(ms: number): void {
    this.ms += ms
  }
}
