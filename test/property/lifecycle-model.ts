import assert from 'node:assert/strict'
import fc from 'fast-check'
import type { DebitModel, Money } from './debit-model.ts'

// The account-lifecycle part of the ledger property's model (transfer-ledger-model.test.ts):
// the account's status as its partner changes it (freeze, unfreeze, close), the bank's legal
// holds on it, and its closure, as RULINGS "Account lifecycle" and docs/guides/payments.md
// describe them, written from those rules rather than from src/account-status.
//
//  - A legal hold lowers the available balance by its amount and leaves the balance alone; one
//    larger than what is available, or on a closed account, is refused (422) and changes
//    nothing; its release gives the amount back; releasing it again answers it as it was
//    released and changes nothing. The property's bank has no dual-control threshold, so a
//    release is at once. Holds are placed
//    without an expiry, or with one years past the run's end. Expiry is not modelled: the
//    hourly expiry job falls due at 00:00 SAST together with the day's collection run, and of
//    two jobs due at the same time the one with the lower (random) id runs first, so whether a
//    dispute that run books sees the released money is not decided.
//  - While the account is not active every debit the customer makes (payout, bulk batch) is
//    refused with 422 `account_not_active`, before a repeated key or the funds are looked at,
//    and nothing is held or claimed; credits still arrive (a closed account takes none: an
//    operator's deposit to it is refused with 422 `account_not_active` too); what was taken
//    before (a pending EFT, a verified batch) still settles. Debit
//    orders take nothing from an account that is not active: a dispute's whole amount becomes
//    the partner's debt, and a credit to it pays nothing of a debt (debitView).
//  - A close is refused with 422 `account_not_closable` naming, in this order, each obstacle:
//    `pending_transactions` (a pending payout, a batch waiting for its PIN, a verified batch
//    not yet completed: its payments not yet written or waiting for their rail, whose refunds
//    would come back; a debit order's collection under way with the debtor's bank),
//    `legal_holds` (any holding), `payout_missing` (a balance and no account named to take
//    it); a successful payout that may still be returned is none.
//    Allowed, the whole balance goes in the same request to the entity's second account
//    (internal, no fee, no fee row), the status becomes `closed`, and the scheduled debit
//    orders that collect into it are cancelled (the customer keeps an open account, so its
//    mandates stay). Closing a closed account answers its status and moves nothing. After it
//    no debit is taken and nothing changes the account's balance, which stays 0: a
//    collection still being retried into it is not asked of the debtor's bank and fails (the
//    order stops), a dispute takes nothing from it, and a return of a payout it made before it
//    closed turns the payout Reversed and is kept by the bank as unclaimed funds (no row on
//    the closed account; `unclaimed`).

export type AccountStatus = 'active' | 'frozen' | 'closed'

export type LifecycleAction =
  /**
   * An operator's legal hold (after a deposit of `fund` cents, when not 0) of `amount` cents
   * (`fixed`), of `amount` mod 10 + 1 tenths of what is available (`part`), of everything
   * available, or of one cent more; then, with a probe, a payout (EFT or RTC) of one cent
   * more than is left available.
   */
  | { kind: 'hold_place'; fund: number; amount: number; size: 'fixed' | 'part' | 'all' | 'over';
    expires: boolean; probe: 'none' | 'EFT' | 'RTC' }
  /**
   * An operator releases one of the run's holds still holding (index modulo those); with
   * `again`, one released already (when there is one).
   */
  | { kind: 'hold_release'; pick: number; again: boolean }
  /** The partner unfreezes the account (on an active account: answered, nothing changes). */
  | { kind: 'unfreeze' }
  /**
   * The partner closes the account, naming the entity's second account for the balance or not;
   * with `settle`, right after a clearing run (as a partner waits for its payments to clear).
   */
  | { kind: 'close'; payTo: boolean; settle: boolean }

/** Weights: with the freeze's (the test file's), a sixth of the other actions' together. */
export const lifecycleActions: Array<fc.WeightedArbitrary<LifecycleAction>> = [
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('hold_place' as const),
      // Often the account has nothing available: a garnishee order meets a salary.
      fund: fc.oneof(fc.constant(0), fc.integer({ min: 1_000, max: 100_000 })),
      amount: fc.integer({ min: 100, max: 50_000 }),
      size: fc.constantFrom('part' as const, 'part' as const, 'part' as const, 'fixed' as const,
        'all' as const, 'over' as const),
      expires: fc.boolean(),
      probe: fc.constantFrom('none' as const, 'EFT' as const, 'RTC' as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hold_release' as const), pick: fc.nat(),
    again: fc.integer({ min: 0, max: 4 }).map((n) => n === 0) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unfreeze' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('close' as const),
    payTo: fc.integer({ min: 0, max: 3 }).map((n) => n > 0), settle: fc.boolean() }) },
]

const lifecycle_kinds: ReadonlySet<string> = new Set(['hold_place', 'hold_release', 'unfreeze',
  'close', 'freeze'])

/** Whether an action is one of the lifecycle's (freeze included). */
export function isLifecycleKind(kind: string): boolean {
  return lifecycle_kinds.has(kind)
}

export type Obstacle = 'pending_transactions' | 'legal_holds' | 'payout_missing'

export interface HoldModel {
  holdId: string
  amount: bigint
  released: boolean
}

/** The account's status, its legal holds, and the entity's second account closure pays into. */
export class Lifecycle {
  status: AccountStatus = 'active'
  readonly holds: HoldModel[] = []
  /** Made at the first close attempt; what it has received (closure's payout only). */
  payee: { accountId: string; balance: bigint } | undefined
  /** What came back for the account once closed (returns): the bank's unclaimed funds. */
  unclaimed = 0n

  /** The customer may debit the account: it is active. */
  get debitable(): boolean {
    return this.status === 'active'
  }

  /** The amount a hold_place action asks for, with `available` cents available. */
  static holdAmount(a: Extract<LifecycleAction, { kind: 'hold_place' }>,
      available: bigint): bigint {
    switch (a.size) {
      case 'fixed':
        return BigInt(a.amount)
      case 'part': {
        const part = available * BigInt(a.amount % 10 + 1) / 10n
        return part > 0n ? part : 1n
      }
      case 'all':
        return available > 0n ? available : 1n
      case 'over':
        return available + 1n
    }
  }

  activeHolds(): HoldModel[] {
    return this.holds.filter((h) => !h.released)
  }

  /** A hold is placed when the account is not closed and its available balance covers it. */
  place(money: Money, holdId: string, amount: bigint): void {
    assert.ok(this.status !== 'closed' && amount <= money.available)
    this.holds.push({ holdId, amount, released: false })
    money.available -= amount
  }

  release(money: Money, hold: HoldModel): void {
    assert.ok(!hold.released)
    hold.released = true
    money.available += hold.amount
  }

  /** What stands in the way of a close, in the order the refusal names them. */
  obstacles(pending: boolean, balance: bigint, payTo: boolean): Obstacle[] {
    const obstacles: Obstacle[] = []
    if (pending) obstacles.push('pending_transactions')
    if (this.activeHolds().length > 0) obstacles.push('legal_holds')
    if (balance > 0n && !payTo) obstacles.push('payout_missing')
    return obstacles
  }

  /**
   * The account closed with `amount` paid to the payee: the scheduled debit orders that collect
   * into it are cancelled.
   */
  closed(amount: bigint, debit: DebitModel): void {
    this.status = 'closed'
    if (amount > 0n) this.payee!.balance += amount
    for (const o of debit.orders) {
      if (o.status !== 'scheduled') continue
      o.status = 'cancelled'
      o.next = null
      o.history.push('cancelled')
    }
  }

  /** A return of `amount` for the closed account: kept by the bank, its balance untouched. */
  returnedUnclaimed(amount: bigint): void {
    assert.equal(this.status, 'closed')
    this.unclaimed += amount
  }

  /**
   * Runs `work` (a collection run of the debit model) with a closed account's collections
   * treated as the debit model treats those whose mandate is no longer active: not asked of
   * the debtor's bank (no attempt counted), failed, the order stopped. That is the rule for a
   * collection into an account that takes no credits. Mandates are as they were after it.
   */
  collectingInto<T>(debit: DebitModel, work: () => T): T {
    if (this.status !== 'closed') return work()
    const was = debit.mandates.map((m) => m.status)
    for (const m of debit.mandates) if (m.status === 'active') m.status = 'cancelled'
    try {
      return work()
    } finally {
      debit.mandates.forEach((m, i) => { m.status = was[i]! })
    }
  }
}

/**
 * The account as debit orders see it: what a dispute may take back and what a debt may be
 * recovered from is its available balance while it is active, nothing otherwise; credits
 * arrive either way.
 */
export function debitView(money: Money, lifecycle: Lifecycle): Money {
  const shown = () => (lifecycle.debitable ? money.available : 0n)
  return {
    get balance() {
      return money.balance
    },
    set balance(value: bigint) {
      money.balance = value
    },
    get available() {
      return shown()
    },
    set available(value: bigint) {
      money.available += value - shown()
    },
  }
}
