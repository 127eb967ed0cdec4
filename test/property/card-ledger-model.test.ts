import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { checkProperty } from './property-budget.ts'
import fc from 'fast-check'
import { card_limits } from '../../src/cards/card-contract.ts'
import type { TransactionView } from '../../src/transfers/transfer-contract.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { outcome, type Outcome } from '../support/assertions.ts'
import { transactionsOf } from '../transfers/helpers.ts'
import { cardSetup, issueCard, purchase } from '../cards/helpers.ts'
import { authorizationRow, limits, type Authorization } from '../cards/rule-helpers.ts'

// A model-based property of card payments in the ledger (src/cards/card-network.ts,
// src/ledger/card-journals.ts), in the manner of transfer-ledger-model.test.ts and with the
// same harness: random sequences of card authorizations (approved, or declined by the card's
// transaction limit or by the funds), increments, partial and whole reversals, clearings
// (below, at and up to 15 % above the hold, and just over it), repeated clearings, refunds
// and expiry (the clock moved 8 days, then the expiry run), interleaved with deposits, RTC
// and EFT transfers and clearing runs, each compared with a model of the account:
//  - authorize: the transaction limit first (declined `limit_exceeded`), then the funds
//    (`insufficient_funds`); approved, available − amount and a Pending `card` row;
//  - increment: limit on amount − reversed + increment, then the funds; a decline leaves the
//    authorization pending as it was; on one not pending, 409;
//  - reverse: more than held is 400; all of it releases the hold and the row turns Reversed;
//  - clear: over held + 15 % (rounded down) is 400; more than available + held is 422;
//    else the hold is released and the amount posted: the `card` row its first amount, a
//    child `card` row the difference (a credit below, a debit above); the same clearing again
//    answers the same view and moves nothing; another amount, or a clearing of an
//    authorization reversed or expired, is 409;
//  - refund: a `refund` row credits the account;
//  - expiry: every authorization pending more than 7 days releases its hold (status expired,
//    row Reversed); the run's count is the model's (each run ends with one, so none of an
//    earlier run is left to expire).
// After each action the balance and available balance are the model's; at the end of a run
// every authorization's status and amounts, every card row (status, debit, credit) and
// adjustment row, and `ledger verify`. Jobs run only when the test says (the job runner is
// stopped); the clock is the injected one. Reproduce a failure with BANK_PROPERTY_SEED=<seed>;
// search longer with BANK_PROPERTY_RUNS=<runs> and BANK_PROPERTY_SECONDS=<seconds> (the time
// budget, 180 s by default: property-budget.ts).

type Action =
  | { kind: 'deposit'; amount: number }
  | { kind: 'transfer'; rtc: boolean; amount: number }
  /** An RTC transfer of all that is available (less its fee): a clearing over the hold is short. */
  | { kind: 'spend_all' }
  | { kind: 'clearing_run' }
  | { kind: 'authorize'; amount: number }
  | { kind: 'increment'; pick: number; amount: number }
  /** `permille` of what is held (at least 1 cent); 1000 or more is the whole of it. */
  | { kind: 'reverse'; pick: number; whole: boolean; permille: number }
  | { kind: 'clear'; pick: number; how: ClearHow }
  | { kind: 'clear_again'; pick: number; same: boolean }
  | { kind: 'refund'; amount: number }
  | { kind: 'advance'; minutes: number }
  | { kind: 'expire' }

/** Exactly the hold, the most allowed (15 % over), one cent more, or `permille` of the hold. */
type ClearHow = 'equal' | 'most' | 'over' | number

type AuthStatus = 'pending' | 'cleared' | 'reversed' | 'expired' | 'declined'

interface AuthModel {
  id: string
  txId: string | null
  status: AuthStatus
  declineReason: string | null
  /** The first authorized amount: the `card` row's amount and debit. */
  first: bigint
  /** Authorized in all, increments included. */
  amount: bigint
  held: bigint
  reversed: bigint
  cleared: bigint
  createdAtMs: number
}

const day_ms = 86_400_000
const pick = fc.nat()
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('deposit' as const),
      amount: fc.integer({ min: 1_000, max: 80_000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('transfer' as const),
      rtc: fc.boolean(),
      amount: fc.integer({ min: 100, max: 40_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'clearing_run' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'spend_all' as const }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('authorize' as const),
      amount: fc.oneof(fc.integer({ min: 1, max: 15_000 }), fc.integer({ min: 1, max: 60_000 })),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('increment' as const),
      pick,
      amount: fc.integer({ min: 1, max: 20_000 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('reverse' as const),
      pick,
      whole: fc.boolean(),
      permille: fc.integer({ min: 1, max: 1_000 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('clear' as const),
      pick,
      how: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom<ClearHow>('equal', 'most', 'over') },
        { weight: 2, arbitrary: fc.integer({ min: 1, max: 1_150 }) },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('clear_again' as const), pick, same: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      amount: fc.integer({ min: 1, max: 20_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      minutes: fc.integer({ min: 1, max: 4 * 24 * 60 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
)

const scenario = fc.record({
  opening: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 200_000 })),
  /** The card's transaction limit, or none. */
  transactionLimit: fc.option(fc.integer({ min: 5_000, max: 60_000 }), { freq: 3 }),
  actions: fc.array(action, { minLength: 10, maxLength: 30 }),
})

/** The expected state of one account and its card's authorizations. */
class Model {
  balance = 0n
  available = 0n
  /** EFT payouts held (amount + fee), posted by the next clearing run. */
  pendingEft: bigint[] = []
  readonly auths: AuthModel[] = []
  refunds = 0

  constructor(readonly transactionLimit: bigint | null) {}

  credit(amount: bigint): void {
    this.balance += amount
    this.available += amount
  }

  overLimit(total: bigint): boolean {
    return this.transactionLimit !== null && total > this.transactionLimit
  }

  /** Why an authorization of `amount` is declined, or null (then it holds it). */
  authorize(id: string, txId: string | null, amount: bigint, nowMs: number): AuthModel {
    const reason = this.overLimit(amount)
      ? 'limit_exceeded'
      : this.available < amount
        ? 'insufficient_funds'
        : null
    const auth: AuthModel = {
      id,
      txId,
      status: reason ? 'declined' : 'pending',
      declineReason: reason,
      first: amount,
      amount,
      held: reason ? 0n : amount,
      reversed: 0n,
      cleared: 0n,
      createdAtMs: nowMs,
    }
    if (!reason) this.available -= amount
    this.auths.push(auth)
    return auth
  }

  /** An increment's decline reason, or null when it holds `amount` more. */
  increment(auth: AuthModel, amount: bigint): string | null {
    if (this.overLimit(auth.amount - auth.reversed + amount)) return 'limit_exceeded'
    if (this.available < amount) return 'insufficient_funds'
    this.available -= amount
    auth.amount += amount
    auth.held += amount
    return null
  }

  reverse(auth: AuthModel, amount: bigint): void {
    this.available += amount
    auth.held -= amount
    auth.reversed += amount
    if (auth.held === 0n) auth.status = 'reversed'
  }

  /** The most a clearing may post: 15 % over the hold, rounded down. */
  static most(held: bigint): bigint {
    return held + (held * BigInt(card_limits.over_clearing_percent)) / 100n
  }

  clear(auth: AuthModel, amount: bigint): void {
    this.available += auth.held - amount
    this.balance -= amount
    auth.held = 0n
    auth.cleared = amount
    auth.status = 'cleared'
  }

  /** Every authorization pending since before `nowMs` − 7 days expires; answers how many. */
  expire(nowMs: number): number {
    const before = nowMs - card_limits.authorization_expiry_days * day_ms
    const due = this.auths.filter((a) => a.status === 'pending' && a.createdAtMs < before)
    for (const a of due) {
      this.available += a.held
      a.reversed += a.held
      a.held = 0n
      a.status = 'expired'
    }
    return due.length
  }
}

const tb = useTestBank()
let fees: { EFT: bigint; RTC: bigint }

before(async () => {
  await tb.ready
  // Jobs run only when the test says: the hourly expiry job must not expire behind the model.
  await tb.bank.services.jobRunner.stop()
  fees = tb.config.fees
})

/** What the runs came to, printed at the end: each outcome the model predicted, counted. */
const tally = new Map<string, number>()
const count = (what: string) => tally.set(what, (tally.get(what) ?? 0) + 1)

const view = (a: Outcome<Authorization>) =>
  a.ok ? JSON.stringify(a.value) : `${a.error.code} ${a.error.message}`

class Run {
  readonly log: string[] = []

  constructor(
    readonly partner: TestPartner,
    readonly accountId: string,
    readonly cardId: string,
    readonly model: Model,
  ) {}

  get context(): string {
    return `actions so far:\n${this.log.join('\n')}`
  }

  async apply(a: Action): Promise<void> {
    this.log.push(JSON.stringify(a))
    switch (a.kind) {
      case 'deposit':
        await tb.operator.accounts.deposit({
          account_id: this.accountId,
          amount: a.amount,
          ref: 'card property deposit',
        })
        return this.model.credit(BigInt(a.amount))
      case 'spend_all': {
        const amount = this.model.available - fees.RTC
        return amount >= 100n ? this.transfer(true, Number(amount)) : undefined
      }
      case 'transfer':
        return this.transfer(a.rtc, a.amount)
      case 'clearing_run':
        await tb.operator.clearing.run()
        this.model.balance -= this.model.pendingEft.reduce((sum, t) => sum + t, 0n)
        this.model.pendingEft = []
        return
      case 'authorize':
        return this.authorize(a.amount)
      case 'increment':
        return this.increment(this.pick(a.pick, true), a.amount)
      case 'reverse':
        return this.reverse(this.pick(a.pick, true), a.whole, a.permille)
      case 'clear':
        return this.clear(this.pick(a.pick, true), a.how)
      case 'clear_again':
        return this.clearAgain(this.pick(a.pick, false), a.same)
      case 'refund':
        return this.refund(a.amount)
      case 'advance':
        tb.clock.advance(a.minutes * 60_000)
        return
      case 'expire':
        return this.expire()
    }
  }

  /** An approved authorization: two picks in three a pending one (if any), the rest any. */
  private pick(n: number, pendingFirst: boolean): AuthModel | undefined {
    const approved = this.model.auths.filter((a) => a.status !== 'declined')
    const pending = approved.filter((a) => a.status === 'pending')
    const from = pendingFirst && n % 3 !== 0 && pending.length > 0 ? pending : approved
    return from[Math.floor(n / 3) % Math.max(1, from.length)]
  }

  private async transfer(rtc: boolean, amount: number): Promise<void> {
    const total = BigInt(amount) + (rtc ? fees.RTC : fees.EFT)
    const reply = await outcome(
      this.partner.client.accounts.transfer({
        account_id: this.accountId,
        clientTxId: randomUUID(),
        amount,
        ref: 'card model',
        own_ref: 'card model',
        pay_and_clear: rtc,
        account_number: '62000000017',
        branch_code: '250655',
        name: 'Recipient',
      }),
    )
    if (this.model.available < total) {
      assert.ok(
        !reply.ok && reply.error.code === 400,
        `a transfer of ${total} with ${this.model.available} available: ${this.context}`,
      )
      return
    }
    assert.ok(
      reply.ok,
      `the transfer should be accepted: ${reply.ok ? '' : reply.error.message}; ${this.context}`,
    )
    this.model.available -= total
    if (rtc) this.model.balance -= total
    else this.model.pendingEft.push(total)
  }

  private async authorize(amount: number): Promise<void> {
    const reply = await tb.operator.cardNetwork.authorize(purchase(this.cardId, amount))
    const auth = this.model.authorize(
      reply.authorization_id,
      reply.tx_id,
      BigInt(amount),
      tb.clock.now().getTime(),
    )
    assert.equal(reply.decline_reason, auth.declineReason, `authorize ${amount}: ${this.context}`)
    assert.equal(reply.status, auth.status)
    assert.equal(reply.approved, auth.status === 'pending')
    assert.equal(BigInt(reply.held), auth.held)
    assert.equal(reply.tx_id !== null, auth.status === 'pending')
    count(`authorize ${auth.declineReason ?? 'approved'}`)
  }

  private async increment(auth: AuthModel | undefined, amount: number): Promise<void> {
    if (!auth) return this.authorize(amount)
    const reply = await outcome(
      tb.operator.cardNetwork.increment({ authorization_id: auth.id, amount }),
    )
    if (auth.status !== 'pending') {
      assert.ok(
        !reply.ok && reply.error.code === 409,
        `increment of a ${auth.status} authorization: ${view(reply)}; ${this.context}`,
      )
      return
    }
    const reason = this.model.increment(auth, BigInt(amount))
    count(`increment ${reason ?? 'approved'}`)
    assert.ok(reply.ok, `increment ${amount}: ${view(reply)}; ${this.context}`)
    assert.equal(reply.value.decline_reason, reason, `increment ${amount}: ${this.context}`)
    assert.equal(reply.value.approved, reason === null)
    this.checkView(reply.value, auth)
  }

  private async reverse(
    auth: AuthModel | undefined,
    whole: boolean,
    permille: number,
  ): Promise<void> {
    if (!auth) return
    const amount = whole ? undefined : Number((auth.held * BigInt(permille)) / 1000n) || 1
    const reply = await outcome(
      tb.operator.cardNetwork.reverse({ authorization_id: auth.id, ...(amount ? { amount } : {}) }),
    )
    if (auth.status !== 'pending') {
      assert.ok(
        !reply.ok && reply.error.code === 409,
        `reversal of a ${auth.status} authorization: ${view(reply)}; ${this.context}`,
      )
      return
    }
    this.model.reverse(auth, amount === undefined ? auth.held : BigInt(amount))
    count(`reverse ${auth.held === 0n ? 'whole' : 'partial'}`)
    assert.ok(reply.ok, `reverse ${amount ?? 'all'}: ${view(reply)}; ${this.context}`)
    this.checkView(reply.value, auth)
  }

  private async clear(auth: AuthModel | undefined, how: ClearHow): Promise<void> {
    if (!auth) return
    const most = Model.most(auth.held)
    const amount =
      how === 'equal'
        ? auth.held
        : how === 'most'
          ? most
          : how === 'over'
            ? most + 1n
            : (auth.held * BigInt(how)) / 1000n || 1n
    return this.clearAmount(auth, auth.status === 'pending' ? amount : auth.cleared || auth.first)
  }

  /** A clearing sent again: the same amount (answered again), or one cent more (409). */
  private async clearAgain(auth: AuthModel | undefined, same: boolean): Promise<void> {
    if (!auth) return
    const amount = auth.status === 'cleared' ? auth.cleared : auth.first
    return this.clearAmount(auth, same ? amount : amount + 1n)
  }

  private async clearAmount(auth: AuthModel, amount: bigint): Promise<void> {
    const reply = await outcome(
      tb.operator.cardNetwork.clear({ authorization_id: auth.id, amount: Number(amount) }),
    )
    const state = JSON.stringify(auth, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))
    const what = `clear ${amount} of ${state}: ${view(reply)}; ${this.context}`
    if (auth.status !== 'pending') {
      if (auth.status === 'cleared' && auth.cleared === amount) {
        assert.ok(reply.ok, `a repeated clearing is answered again: ${what}`)
        count('clear repeated')
        return this.checkView(reply.value, auth)
      }
      assert.ok(!reply.ok && reply.error.code === 409, what)
      count(`clear 409 (${auth.status})`)
      return
    }
    if (amount > Model.most(auth.held)) {
      assert.ok(!reply.ok && reply.error.code === 400, what)
      count('clear 400 (over 15 %)')
      return
    }
    if (this.model.available + auth.held < amount) {
      assert.ok(!reply.ok && reply.error.code === 422, what)
      count('clear 422 (short)')
      return
    }
    const side = amount < auth.held ? 'below' : amount === auth.held ? 'equal' : 'above'
    count(`clear ${side} the hold${amount === auth.first ? '' : ', adjusted'}`)
    this.model.clear(auth, amount)
    assert.ok(reply.ok, what)
    this.checkView(reply.value, auth)
  }

  private async refund(amount: number): Promise<void> {
    const reply = await tb.operator.cardNetwork.refund({
      card_id: this.cardId,
      amount,
      merchant_name: 'Corner Cafe',
    })
    assert.equal(reply.amount, amount)
    this.model.credit(BigInt(amount))
    this.model.refunds++
  }

  /** The clock moves 8 days; the expiry run expires what the model says, and only that. */
  private async expire(): Promise<void> {
    tb.clock.advance((card_limits.authorization_expiry_days + 1) * day_ms)
    const expired = await tb.bank.services.cardNetwork.expire()
    assert.equal(expired, this.model.expire(tb.clock.now().getTime()), `expired: ${this.context}`)
    tally.set('expired', (tally.get('expired') ?? 0) + expired)
  }

  private checkView(v: Authorization, auth: AuthModel): void {
    const actual = {
      status: v.status,
      amount: v.amount,
      held: v.held,
      reversed: v.reversed,
      cleared: v.cleared,
    }
    const expected = {
      status: auth.status,
      amount: Number(auth.amount),
      held: Number(auth.held),
      reversed: Number(auth.reversed),
      cleared: Number(auth.cleared),
    }
    assert.deepEqual(actual, expected, `authorization ${auth.id}: ${this.context}`)
  }

  async checkBalances(when: string): Promise<void> {
    const d = await this.partner.client.accounts.getDetails({ account_id: this.accountId })
    const got = { balance: BigInt(d.balance), available: BigInt(d.available_balance) }
    assert.deepEqual(
      got,
      { balance: this.model.balance, available: this.model.available },
      `${when}; ${this.context}`,
    )
  }

  /** Every authorization as stored, every card and refund row, and ledger verify. */
  async checkLedger(when: string): Promise<void> {
    await this.checkBalances(when)
    for (const auth of this.model.auths) {
      const row = await authorizationRow(tb, auth.id)
      assert.ok(row, `authorization ${auth.id} is stored`)
      const actual = {
        status: row.status,
        reason: row.decline_reason,
        amount: BigInt(row.amount),
        held: BigInt(row.held),
        reversed: BigInt(row.reversed),
        cleared: BigInt(row.cleared),
      }
      const expected = {
        status: auth.status,
        reason: auth.declineReason,
        amount: auth.amount,
        held: auth.held,
        reversed: auth.reversed,
        cleared: auth.cleared,
      }
      assert.deepEqual(actual, expected, `authorization ${auth.id} (${when}); ${this.context}`)
    }
    const rows = await transactionsOf(this.partner, this.accountId)
    this.checkCardRows(rows, when)
    await this.checkRunningBalances(rows, when)
    const report = await tb.operator.ledger.verify({})
    assert.deepEqual(report.problems, [], `ledger verify (${when})`)
    assert.equal(report.ok, true)
  }

  /**
   * One `card` row per approved authorization (first amount, debit; Pending, Successful when
   * cleared, Reversed when reversed or expired), one child row per clearing of another amount
   * (credit below, debit above), one `refund` row per refund; every row verifies.
   */
  private checkCardRows(rows: TransactionView[], when: string): void {
    const byId = new Map(rows.map((r) => [r.tx_id, r]))
    const approved = this.model.auths.filter((a) => a.txId !== null)
    let adjustments = 0
    for (const auth of approved) adjustments += this.checkCardRow(auth, byId, rows, when)
    const cardRows = rows.filter((r) => r.tx_payment_type === 'CARD')
    const expected = approved.length + adjustments + this.model.refunds
    assert.equal(cardRows.length, expected, `card rows (${when})`)
    assert.equal(rows.filter((r) => r.tx_type === 'refund').length, this.model.refunds)
    assert.ok(
      rows.every((r) => r.verified),
      `every row verifies its chain (${when})`,
    )
  }

  /**
   * Posted rows, in the order they were posted, each carry the balance after them (a
   * clearing below the first amount posts its credit first, so none is ever negative).
   */
  private async checkRunningBalances(rows: TransactionView[], when: string): Promise<void> {
    const posted = await tb.bank.database.db
      .selectFrom('transactions')
      .select(['id', 'posted_order'])
      .where('account_id', '=', this.accountId)
      .where('posted_order', 'is not', null)
      .execute()
    const byId = new Map(rows.map((t) => [t.tx_id, t]))
    const order = (p: { posted_order: unknown }) => BigInt(p.posted_order as bigint)
    posted.sort((a, b) => (order(a) < order(b) ? -1 : 1))
    let running = 0n
    posted.forEach((p, i) => {
      const context = `posted row ${p.id} (${when}); ${this.context}`
      assert.equal(order(p), BigInt(i + 1), `posted_order has no gaps: ${context}`)
      const t = byId.get(p.id)
      assert.ok(t, context)
      running += BigInt(t.credit) - BigInt(t.debit)
      assert.ok(running >= 0n, `never negative: ${context}`)
      assert.equal(BigInt(t.running_balance), running, `running balance: ${context}`)
    })
    assert.equal(running, this.model.balance, `the last running balance is the balance (${when})`)
  }

  /** An authorization's `card` row and its adjustment row (if any); answers how many of those. */
  private checkCardRow(
    auth: AuthModel,
    byId: Map<string, TransactionView>,
    rows: TransactionView[],
    when: string,
  ): number {
    const row = byId.get(auth.txId!)
    const context = `card row of ${auth.id} (${when}); ${this.context}`
    assert.ok(row, context)
    const money = (r: TransactionView) => ({
      status: r.status,
      debit: BigInt(r.debit),
      credit: BigInt(r.credit),
    })
    assert.deepEqual(
      { type: row.tx_type, amount: BigInt(row.amount), ...money(row) },
      {
        type: 'card',
        amount: auth.first,
        status: rowStatus[auth.status],
        debit: auth.first,
        credit: 0n,
      },
      context,
    )
    const children = rows.filter((r) => r.parent_tx_id === auth.txId)
    const difference = auth.status === 'cleared' ? auth.cleared - auth.first : 0n
    const adjustment = {
      status: 'Successful',
      debit: difference > 0n ? difference : 0n,
      credit: difference < 0n ? -difference : 0n,
    }
    assert.deepEqual(children.map(money), difference === 0n ? [] : [adjustment], context)
    return children.length
  }
}

/** The status of an authorization's `card` row. */
const rowStatus: Record<AuthStatus, string> = {
  pending: 'Pending',
  cleared: 'Successful',
  reversed: 'Reversed',
  expired: 'Reversed',
  declined: '',
}

async function newRun(opening: number, transactionLimit: number | null): Promise<Run> {
  const partner = await onboardPartner(tb, { approve: true })
  const s = await cardSetup(tb, partner, 0)
  const cardLimits = limits(transactionLimit === null ? {} : { transaction: transactionLimit })
  const cardId = await issueCard(partner, s, { name: 'Model card', limits: cardLimits })
  const run = new Run(
    partner,
    s.accountId,
    cardId,
    new Model(transactionLimit === null ? null : BigInt(transactionLimit)),
  )
  if (opening > 0) await run.apply({ kind: 'deposit', amount: opening })
  return run
}

test('cards - random authorizations, increments, reversals, clearings, refunds and expiry among deposits and transfers agree with a model of the account', async (t) => {
  const seed = Number(process.env.BANK_PROPERTY_SEED ?? 31_031)
  await checkProperty(t, 
    fc.asyncProperty(scenario, async ({ opening, transactionLimit, actions }) => {
      const run = await newRun(opening, transactionLimit)
      for (const [i, a] of actions.entries()) {
        await run.apply(a)
        await run.checkBalances(`after action ${i}`)
      }
      await run.checkLedger('at the end of the sequence')
      // The end of a run: every EFT posted and every authorization still pending expired,
      // so that no later run's expiry finds one of this run's.
      await run.apply({ kind: 'clearing_run' })
      await run.apply({ kind: 'expire' })
      assert.ok(run.model.auths.every((a) => a.status !== 'pending'))
      await run.checkLedger('after the last clearing run and expiry')
    }),
    { numRuns: Number(process.env.BANK_PROPERTY_RUNS ?? 15), seed },
  )
  console.log('card model', JSON.stringify(Object.fromEntries([...tally].sort())))
})
