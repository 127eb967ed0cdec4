import { AsyncLocalStorage } from 'node:async_hooks'
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

// Partner time (sandbox only). Each partner of a sandbox bank may have moved its own clock
// ahead of the bank's (src/sandbox/partner-clocks.ts): work done for a partner (its requests,
// its jobs) runs in that partner's scope, and a sandbox clock's `now()` answers the partner's
// time there, bank time elsewhere. Outside the sandbox nothing enters a scope.
const partnerScope = new AsyncLocalStorage<string>()

/** Runs `fn` on the partner's clock (none: on the bank's). */
export function onPartnerClock<T>(partnerId: string | undefined, fn: () => T): T {
  return partnerId ? partnerScope.run(partnerId, fn) : partnerScope.exit(fn)
}

/** The partner whose clock applies here, if any. */
export function clockPartner(): string | undefined {
  return partnerScope.getStore()
}

/** The bank's own time, wherever it is asked. */
export function bankNow(clock: Clock): Date {
  return partnerScope.exit(() => clock.now())
}

/** How far partners' clocks are ahead of the bank's (a sandbox clock's; empty elsewhere). */
export interface PartnerLeads {
  /** How far ahead of the bank the partner's clock is, in milliseconds (0: with the bank). */
  leadOf(partnerId: string): number
  /** The partners whose clock is ahead of the bank's. */
  ahead(): string[]
}

export const noPartnerLeads: PartnerLeads = { leadOf: () => 0, ahead: () => [] }

/**
 * The partner whose clock applies here, when that clock is not the bank's (a sandbox clock
 * that has the partner ahead of the bank); undefined elsewhere.
 */
export function partnerAheadOn(clock: Clock): string | undefined {
  const partner = clockPartner()
  if (partner === undefined || !('leadOf' in clock)) return undefined
  return (clock as Clock & PartnerLeads).leadOf(partner) > 0 ? partner : undefined
}
