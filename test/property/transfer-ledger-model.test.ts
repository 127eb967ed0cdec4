import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import fc from 'fast-check'
import type { TxStatus } from '../../src/db/schema.ts'
import { magicRecipients } from '../../src/rails/simulated-rail.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { outcome } from '../support/assertions.ts'

// A model-based property of the ledger, run against the real service (NATS, SDK, storage):
// random sequences of deposits, EFT and RTC transfers to ordinary and magic recipients,
// repeated clientTxIds, clearing runs and clock moves, each compared step by step with a
// small model of the account's balance and available balance (RULINGS, Accounts and the
// ledger: available = balance − holds; EFT held at once and posted by clearing; RTC at
// once; fees separate, covered by the funds check; a duplicate key within the window is
// 409 naming the original tx_id; a returned payment is credited back as a reversal).
//
// The clearing run collects returns FIRST and then settles pending EFTs
// (src/transfers/clearing-service.ts), so an EFT to the "returned" account is settled in
// run k and reversed in run k+1, and an RTC to it is reversed by the first run after it.
// Fees are not returned with a reversal.
//
// One bank serves the whole property; each run uses a fresh partner and account, so the
// model starts from zero. Clearing runs are bank-wide: they also settle what earlier runs
// left pending, which touches only those runs' accounts. Reproduce a failure with
// BANK_PROPERTY_SEED=<seed> (fast-check prints the seed and the shrunk sequence); search
// longer with BANK_PROPERTY_RUNS=<runs> (15 by default, to stay well under a minute).

type Recipient = 'normal' | 'failed' | 'invalid' | 'invalid_branch' | 'returned'

type Action =
  | { kind: 'deposit'; amount: number }
  | { kind: 'transfer'; rtc: boolean; amount: number; recipient: Recipient }
  /** A transfer with the clientTxId of an earlier request (index modulo those sent), its body repeated or changed. */
  | { kind: 'repeat'; pick: number; sameBody: boolean; rtc: boolean; amount: number; recipient: Recipient }
  /**
   * Transfers sent at once, all of one rail and amount to recipients the rail accepts, so
   * that exactly min(count, available / (amount + fee)) of them are accepted, in any order.
   */
  | { kind: 'burst'; count: number; rtc: boolean; amount: number; returned: boolean }
  | { kind: 'clearing' }
  | { kind: 'advance'; minutes: number }

const recipient: fc.Arbitrary<Recipient> = fc.constantFrom('normal', 'normal', 'normal', 'failed', 'invalid', 'invalid_branch', 'returned')
const amount = fc.integer({ min: 100, max: 50_000 })

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('deposit' as const), amount: fc.integer({ min: 1_000, max: 150_000 }) }) },
  { weight: 7, arbitrary: fc.record({ kind: fc.constant('transfer' as const), rtc: fc.boolean(), amount, recipient }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat(), sameBody: fc.boolean(), rtc: fc.boolean(), amount, recipient }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('burst' as const), count: fc.integer({ min: 2, max: 8 }), rtc: fc.boolean(), amount, returned: fc.boolean() }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'clearing' as const }) },
  // Mostly minutes; sometimes exactly the 24-hour duplicate window, or just past it.
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), minutes: fc.oneof(fc.integer({ min: 1, max: 180 }), fc.constantFrom(24 * 60, 24 * 60 + 1)) }),
  },
)

const scenario = fc.record({
  opening: fc.integer({ min: 0, max: 300_000 }),
  actions: fc.array(action, { minLength: 10, maxLength: 25 }),
})

function accountNumberOf(r: Recipient): { account_number: string; branch_code: string } {
  switch (r) {
    case 'failed':
      return { account_number: magicRecipients.failed_account_number, branch_code: '250655' }
    case 'invalid':
      return { account_number: magicRecipients.invalid_account_number, branch_code: '250655' }
    case 'invalid_branch':
      return { account_number: '62000000017', branch_code: magicRecipients.invalid_branch_code }
    case 'returned':
      return { account_number: magicRecipients.returned_account_number, branch_code: '250655' }
    case 'normal':
      return { account_number: '62000000017', branch_code: '250655' }
  }
}

/** What the rail does with a payment to this recipient. */
function railOutcome(r: Recipient): 'Successful' | 'Failed' | 'Invalid' {
  if (r === 'failed') return 'Failed'
  if (r === 'invalid' || r === 'invalid_branch') return 'Invalid'
  return 'Successful'
}

interface TransferBody {
  account_id: string
  clientTxId: string
  amount: number
  ref: string
  own_ref: string
  pay_and_clear: boolean
  account_number: string
  branch_code: string
  name: string
}

interface Payout {
  txId: string
  amount: bigint
  total: bigint
  recipient: Recipient
}

/** The expected state of one account. */
class Model {
  balance = 0n
  available = 0n
  /** EFTs held, settled by the next clearing run. */
  pendingEft: Payout[] = []
  /** Successful payments to the "returned" account, reversed by the next clearing run. */
  returnsDue: Payout[] = []
  readonly status = new Map<string, TxStatus>()
  readonly amountOf = new Map<string, bigint>()
  /** clientTxId → the transfer that claimed it and when (keys of refused requests are released). */
  readonly keys = new Map<string, { txId: string; atMs: number }>()
  readonly sent: TransferBody[] = []
  deposits = 0
  reversals = 0

  deposit(amount: bigint): void {
    this.balance += amount
    this.available += amount
    this.deposits++
  }

  accept(txId: string, body: TransferBody, fee: bigint, recipient: Recipient, nowMs: number): TxStatus {
    const payout = { txId, amount: BigInt(body.amount), total: BigInt(body.amount) + fee, recipient }
    this.keys.set(body.clientTxId, { txId, atMs: nowMs })
    this.amountOf.set(txId, payout.amount)
    let status: TxStatus = 'Pending'
    if (!body.pay_and_clear) {
      this.available -= payout.total
      this.pendingEft.push(payout)
    } else {
      status = railOutcome(recipient)
      if (status === 'Successful') {
        this.balance -= payout.total
        this.available -= payout.total
        if (recipient === 'returned') this.returnsDue.push(payout)
      }
    }
    this.status.set(txId, status)
    return status
  }

  clearingRun(): void {
    for (const r of this.returnsDue) {
      this.balance += r.amount
      this.available += r.amount
      this.status.set(r.txId, 'Reversed')
      this.reversals++
    }
    this.returnsDue = []
    for (const e of this.pendingEft) {
      const status = railOutcome(e.recipient)
      this.status.set(e.txId, status)
      if (status === 'Successful') {
        this.balance -= e.total
        if (e.recipient === 'returned') this.returnsDue.push(e)
      } else {
        this.available += e.total
      }
    }
    this.pendingEft = []
  }
}

const tb = useTestBank()
let fees: { EFT: bigint; RTC: bigint }

before(async () => {
  await tb.ready
  fees = tb.config.fees
})

class Run {
  readonly model = new Model()
  readonly log: string[] = []

  constructor(
    readonly partner: TestPartner,
    readonly accountId: string,
  ) {}

  async apply(a: Action): Promise<void> {
    this.log.push(JSON.stringify(a))
    switch (a.kind) {
      case 'deposit':
        await tb.operator.accounts.deposit({ account_id: this.accountId, amount: a.amount, ref: 'property deposit' })
        this.model.deposit(BigInt(a.amount))
        return
      case 'transfer':
        return this.transfer(this.body(randomUUID(), a))
      case 'repeat': {
        const earlier = this.model.sent[a.pick % Math.max(1, this.model.sent.length)]
        if (!earlier) return this.transfer(this.body(randomUUID(), a))
        return this.transfer(a.sameBody ? { ...earlier } : this.body(earlier.clientTxId, a))
      }
      case 'burst':
        return this.burst(a)
      case 'clearing':
        await tb.operator.clearing.run()
        this.model.clearingRun()
        return
      case 'advance':
        tb.clock.advance(a.minutes * 60_000)
        return
    }
  }

  private body(clientTxId: string, a: { rtc: boolean; amount: number; recipient: Recipient }): TransferBody {
    return {
      account_id: this.accountId,
      clientTxId,
      amount: a.amount,
      ref: `property ${a.recipient}`,
      own_ref: 'model test',
      pay_and_clear: a.rtc,
      ...accountNumberOf(a.recipient),
      name: 'Recipient',
    }
  }

  private async transfer(body: TransferBody): Promise<void> {
    const model = this.model
    model.sent.push(body)
    const fee = body.pay_and_clear ? fees.RTC : fees.EFT
    const nowMs = tb.clock.now().getTime()
    const claim = model.keys.get(body.clientTxId)
    const reply = await outcome(this.partner.client.accounts.transfer(body))
    if (claim && nowMs - claim.atMs <= tb.config.transferKeyWindowMs) {
      assert.ok(!reply.ok, `a repeated clientTxId within the window must be refused`)
      assert.equal(reply.error.code, 409, reply.error.message)
      assert.equal((reply.error.details[0] as { tx_id?: string }).tx_id, claim.txId)
      return
    }
    if (model.available < BigInt(body.amount) + fee) {
      assert.ok(!reply.ok, `a transfer of ${body.amount} + ${fee} with ${model.available} available must be refused`)
      assert.equal(reply.error.code, 400, reply.error.message)
      assert.match(reply.error.message, /insufficient funds/)
      return
    }
    assert.ok(reply.ok, `the transfer should be accepted: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    const recipient = this.recipientOf(body)
    const status = model.accept(reply.value.tx_id, body, fee, recipient, nowMs)
    assert.equal(reply.value.status, status)
    assert.equal(reply.value.amount, String(body.amount))
  }

  private async burst(a: { count: number; rtc: boolean; amount: number; returned: boolean }): Promise<void> {
    const model = this.model
    const recipient: Recipient = a.returned ? 'returned' : 'normal'
    const bodies = Array.from({ length: a.count }, () => this.body(randomUUID(), { ...a, recipient }))
    model.sent.push(...bodies)
    const total = BigInt(a.amount) + (a.rtc ? fees.RTC : fees.EFT)
    const affordable = Math.min(a.count, Number(model.available / total))
    const nowMs = tb.clock.now().getTime()
    const replies = await Promise.all(bodies.map((body) => outcome(this.partner.client.accounts.transfer(body))))
    let accepted = 0
    replies.forEach((reply, i) => {
      if (!reply.ok) {
        assert.equal(reply.error.code, 400, reply.error.message)
        assert.match(reply.error.message, /insufficient funds/)
        return
      }
      accepted++
      const status = model.accept(reply.value.tx_id, bodies[i]!, total - BigInt(a.amount), recipient, nowMs)
      assert.equal(reply.value.status, status)
    })
    assert.equal(accepted, affordable, `${a.count} transfers of ${total} at once with ${model.available + BigInt(accepted) * total} available`)
  }

  private recipientOf(body: TransferBody): Recipient {
    if (body.branch_code === magicRecipients.invalid_branch_code) return 'invalid_branch'
    if (body.account_number === magicRecipients.failed_account_number) return 'failed'
    if (body.account_number === magicRecipients.invalid_account_number) return 'invalid'
    if (body.account_number === magicRecipients.returned_account_number) return 'returned'
    return 'normal'
  }

  async checkBalances(when: string): Promise<void> {
    const d = await this.partner.client.accounts.getDetails({ account_id: this.accountId })
    const balance = BigInt(d.balance)
    const available = BigInt(d.available_balance)
    const context = `${when}; actions so far:\n${this.log.join('\n')}`
    assert.ok(balance >= 0n && available >= 0n && available <= balance, `balance ${balance}, available ${available}: ${context}`)
    assert.equal(balance, this.model.balance, `balance: ${context}`)
    assert.equal(available, this.model.available, `available: ${context}`)
  }

  /** The whole picture: ledger verification, every row's status and chain link, running balances. */
  async checkLedger(when: string): Promise<void> {
    await this.checkBalances(when)
    const report = await tb.operator.ledger.verify()
    assert.deepEqual(report.problems, [], when)
    assert.equal(report.ok, true)
    assert.equal(report.postings_total, '0')

    const { transactions, next_cursor } = await this.partner.client.accounts.listTransactions({ account_id: this.accountId, limit: 1000 })
    assert.equal(next_cursor, undefined)
    const model = this.model
    const feeRows = fees.EFT > 0n && fees.RTC > 0n ? 1 : 0
    assert.equal(transactions.length, model.deposits + model.status.size * (1 + feeRows) + model.reversals, when)
    for (const t of transactions) {
      assert.equal(t.verified, true, `${t.tx_id} fails its chain check (${when})`)
      if (t.tx_type === 'transfer') assert.equal(t.status, model.status.get(t.tx_id), `transfer ${t.tx_id} (${when})`)
      if (t.tx_type === 'fee') {
        const parent = model.status.get(t.parent_tx_id)
        assert.equal(t.status, parent === 'Reversed' ? 'Successful' : parent, `fee of ${t.parent_tx_id} (${when})`)
      }
      if (t.tx_type === 'reversal') {
        assert.equal(model.status.get(t.parent_tx_id), 'Reversed')
        assert.equal(BigInt(t.amount), model.amountOf.get(t.parent_tx_id))
      }
    }
    await this.checkRunningBalances(transactions, when)
  }

  /** Posted rows, in the order they were posted, each carry the balance after it. */
  private async checkRunningBalances(transactions: Array<{ tx_id: string; credit: string; debit: string; running_balance: string }>, when: string) {
    const posted = await tb.bank.database.db
      .selectFrom('transactions')
      .select(['id', 'posted_order'])
      .where('account_id', '=', this.accountId)
      .where('posted_order', 'is not', null)
      .execute()
    const byId = new Map(transactions.map((t) => [t.tx_id, t]))
    const ordered = posted.map((p) => ({ id: p.id, order: BigInt(p.posted_order!) })).sort((a, b) => (a.order < b.order ? -1 : 1))
    let running = 0n
    ordered.forEach((p, i) => {
      assert.equal(p.order, BigInt(i + 1), `posted_order has no gaps (${when})`)
      const t = byId.get(p.id)
      assert.ok(t, `posted row ${p.id} is listed`)
      running += BigInt(t.credit) - BigInt(t.debit)
      assert.equal(BigInt(t.running_balance), running, `running balance of ${p.id} (${when})`)
    })
    assert.equal(running, this.model.balance, `the last running balance is the balance (${when})`)
  }
}

test('ledger - random deposits, EFT/RTC transfers, repeated keys, clearing and time agree with a model of the account', async () => {
  const seed = process.env.BANK_PROPERTY_SEED
  await fc.assert(
    fc.asyncProperty(scenario, async ({ opening, actions }) => {
      const partner = await onboardPartner(tb, { approve: true })
      const { accounts } = await partner.client.accounts.getByEntity({ entity_id: partner.rootEntityId })
      const run = new Run(partner, accounts[0]!.account_id)
      if (opening > 0) await run.apply({ kind: 'deposit', amount: opening })
      for (const [i, a] of actions.entries()) {
        await run.apply(a)
        await run.checkBalances(`after action ${i}`)
      }
      await run.checkLedger('at the end of the sequence')
      // Two more runs settle every pending EFT and collect every return, so the final
      // statuses (Successful, Failed, Invalid, Reversed) are checked too.
      await run.apply({ kind: 'clearing' })
      await run.apply({ kind: 'clearing' })
      assert.equal(run.model.pendingEft.length + run.model.returnsDue.length, 0)
      await run.checkLedger('after draining clearing runs')
    }),
    { numRuns: Number(process.env.BANK_PROPERTY_RUNS ?? 15), ...(seed ? { seed: Number(seed) } : {}) },
  )
})
