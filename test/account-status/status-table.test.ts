import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import type { DebitCollectionRequest } from '../../src/rails/debit-rail.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import {
  accountNumberOf, balances, fund, internalBody, newAccount, transactionsOf, transferBody,
} from '../transfers/helpers.ts'
import { expectApproved, expectDecline } from '../cards/rule-helpers.ts'
import { holderAddress, issueCard, purchase } from '../cards/helpers.ts'
import { batchBody, payment } from '../bulk/helpers.ts'
import {
  advanceTo, collectionsOf, debitRowsOf, debtOf, debtors, eventsOf, fee, sast,
} from '../debit/collection-helpers.ts'

// Each account status against each operation, as one table (RULINGS "Account lifecycle";
// src/ledger/account-status.ts; docs/guides/debit-orders.md): rows are operations, columns
// statuses, each cell what must happen. frozen and dormant: no customer debits, credits arrive;
// blocked: no debits and no credits (another bank's credit is returned AC06, an internal payment
// to it refused account_not_active without telling its status, a debit-order collection not
// submitted); active: everything. A debtor's dispute is never refused, but it takes nothing
// from an account that is not active: the whole amount becomes the partner's debt. Every cell
// is observed (what happened, not what was expected) and each row compared whole; a refusal
// must leave the account's balances and transactions as they were. One partner, one entity
// per status (a debit order credits its entity's oldest account), on the sandbox clock.

type Status = 'active' | 'frozen' | 'blocked' | 'dormant'
type Outcome = 'allowed' | 'refused' | 'owed by partner'
const ok: Outcome = 'allowed'
const no: Outcome = 'refused'
/** A dispute on an account that is not active: nothing taken from it, the partner owes it. */
const owed: Outcome = 'owed by partner'

// allowed: it goes through (a dispute: taken back from the account); refused: nothing moves.
const table = {
  'EFT payout':             { active: ok, frozen: no,   blocked: no,   dormant: no   },
  'RTC payout':             { active: ok, frozen: no,   blocked: no,   dormant: no   },
  'internal transfer out':  { active: ok, frozen: no,   blocked: no,   dormant: no   },
  'internal transfer in':   { active: ok, frozen: ok,   blocked: no,   dormant: ok   },
  'bulk batch (funding)':   { active: ok, frozen: no,   blocked: no,   dormant: no   },
  'card authorization':     { active: ok, frozen: no,   blocked: no,   dormant: no   },
  'incoming credit':        { active: ok, frozen: ok,   blocked: no,   dormant: ok   },
  'debit-order collection': { active: ok, frozen: ok,   blocked: no,   dormant: ok   },
  'debit-order dispute':    { active: ok, frozen: owed, blocked: owed, dormant: owed },
} satisfies Record<string, Record<Status, Outcome>>

type Operation = keyof typeof table
const statuses: readonly Status[] = ['active', 'frozen', 'blocked', 'dormant']

// ---- Statuses: how an account gets each, and what a refusal says by status. A `closed`
// column comes with closure: add it to Status and `statuses`, give it a way here, and a cell
// to each row of the table (card: account_closed, incoming: AC04, by the two functions below).

/** How an account gets each status, by the paths the bank has. */
const putInStatus: Record<Status, (accountId: string) => Promise<unknown>> = {
  active: async () => {},
  frozen: (id) => p.client.accounts.freeze({ account_id: id, reason: 'Fraud report 17' }),
  blocked: (id) => tb.operator.accounts.block({ account_id: id, reason: 'Deceased' }),
  // What the dormancy job does once a year without customer activity has passed (the job
  // itself: test/account-status/account-status.test.ts).
  dormant: (id) => tb.bank.services.accountStatus.change({ kind: 'system' }, id, 'dormant',
    'no customer activity for 365 days'),
}

/** The decline a card authorization on an account that is not active gets. */
const declineOf = (status: string) => status === 'closed' ? 'account_closed' : 'account_frozen'

/** The reason code another bank's credit to an account that takes no credits comes back with. */
const returnCodeOf = (status: string) => status === 'closed' ? 'AC04' : 'AC06'

// ---- The subjects: one account per status, and what each needs for every operation.

/** One status's account: its entity's oldest (the one its debit orders credit). */
interface Subject {
  status: Status
  entityId: string
  accountId: string
  number: string
  cardId: string
  /** Collected while active, disputed by the debtor once the account has its status. */
  disputedOrder: string
  /** Made while active, due after the account has its status. */
  laterOrder: string
}

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
/** An active account of the partner's root entity that pays into the subjects. */
let payer: string
const subjects = new Map<Status, Subject>()
const funds = 1_000_000
const orderAmount = 10_000
const net = orderAmount - fee

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
  payer = await newAccount(p)
  await fund(tb, payer, funds)
  for (const status of statuses) subjects.set(status, await subjectFor(status))
})

async function subjectFor(status: Status): Promise<Subject> {
  const entityId = (await p.client.entities.create(businessEntity())).id
  await tb.operator.entities.review({ entity_id: entityId, decision: 'approve' })
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: entityId })
  const accountId = accounts[0]!.account_id
  await fund(tb, accountId, funds)
  const user = async (email: string) => (await p.client.users.create(userRequest(entityId,
    { email, verified: true, address: holderAddress }) as never)).userId
  const cardId = await issueCard(p, { accountId, entityId, holderId: await user('h@acme.example'),
    approverId: await user('a@acme.example') })
  const disputedOrder = await orderFor(entityId, debtors.disputed, '2026-11-25')
  const laterOrder = await orderFor(entityId, debtors.ordinary, '2026-11-27')
  return { status, entityId, accountId, number: await accountNumberOf(p, accountId), cardId,
    disputedOrder, laterOrder }
}

/** A once-off order of `orderAmount` under a mandate of its own, crediting the entity. */
async function orderFor(entityId: string, debtorNumber: string, date: string): Promise<string> {
  const debtor = { account_holder_name: 'Thandi Nkosi', account_number: debtorNumber,
    account_type: 'cheque' as const, branch_code: '250655' }
  const mandate_reference = `M-${randomUUID().slice(0, 8)}`
  await p.client.mandates.create({ entity_id: entityId, mandate_reference, ...debtor,
    max_amount: 1_000_000, frequency: 'once_off' })
  await tb.bank.services.jobRunner.runDue()
  const created = await p.client.debitOrders.create({ entity_id: entityId,
    clientTxId: randomUUID(), mandate_reference, amount: orderAmount, collection_date: date,
    ...debtor, reference: 'Gym fees', frequency: 'once_off' })
  return created.debit_order_id
}

const subject = (status: Status) => subjects.get(status)!

/** What a refusal must leave as it was: the account's balances and its transactions. */
async function moneyOf(accountId: string) {
  return { balances: await balances(p, accountId), rows: await transactionsOf(p, accountId) }
}

const available = async (accountId: string) =>
  Number((await balances(p, accountId)).available)

/**
 * Runs `attempt` against the subject's account: success is `allowed` (`moved` checks what
 * moved); a 422 account_not_active is `refused`, and must have changed nothing.
 */
async function observe(s: Subject, attempt: () => Promise<unknown>, moved: (before: number,
    after: number) => void, check?: (error: { type: string; message: string }) => void,
): Promise<Outcome> {
  const before = await moneyOf(s.accountId)
  const outcome = await attempt().then(() => undefined, (error: unknown) => error)
  if (outcome === undefined) {
    moved(Number(before.balances.available), await available(s.accountId))
    return ok
  }
  const error = await expectApiError(Promise.reject(outcome), 422)
  assert.equal(error.type, 'account_not_active', `${s.status}: ${error.message}`)
  check?.(error)
  assert.deepEqual(await moneyOf(s.accountId), before, `${s.status}: a refusal moves nothing`)
  return no
}

/** Every status's cell of one row, observed in turn, compared with the table's row whole. */
async function row(operation: Operation, cell: (s: Subject) => Promise<Outcome>) {
  const observed: Partial<Record<Status, Outcome>> = {}
  for (const status of statuses) observed[status] = await cell(subject(status))
  assert.deepEqual(observed, table[operation], operation)
}

const debited = (amount: number) => (before: number, after: number) =>
  assert.ok(before - after >= amount, `at least ${amount} taken (${before} → ${after})`)
const credited = (amount: number) => (before: number, after: number) =>
  assert.equal(after - before, amount)

test('status table - every account active collects its debit order; then each is given its status', async () => {
  await advanceTo(tb, sast('2026-11-25', '10:00'))
  for (const s of subjects.values()) {
    assert.equal((await orderStatus(s, s.disputedOrder)).status, 'successful')
    assert.equal((await balances(p, s.accountId)).balance, String(funds + net))
    await putInStatus[s.status](s.accountId)
    assert.equal((await p.client.accounts.status({ account_id: s.accountId })).status, s.status)
  }
})

test('status table - EFT payout', () => row('EFT payout', (s) => observe(s,
  () => p.client.accounts.transfer(transferBody(s.accountId)), debited(10_000),
  (e) => assert.match(e.message, new RegExp(s.status)))))

test('status table - RTC payout', () => row('RTC payout', (s) => observe(s,
  () => p.client.accounts.transfer(transferBody(s.accountId, { pay_and_clear: true })),
  debited(10_000))))

test('status table - internal transfer out', () => row('internal transfer out', async (s) => {
  const payee = await accountNumberOf(p, payer)
  return observe(s, () => p.client.accounts.transferInternal(internalBody(s.accountId, payee)),
    debited(10_000))
}))

test('status table - internal transfer in (credit): a refusal does not tell the payee\'s status', () => row('internal transfer in', async (s) => {
  const payerBefore = await moneyOf(payer)
  const outcome = await observe(s,
    () => p.client.accounts.transferInternal(internalBody(payer, s.number, { amount: 500 })),
    credited(500),
    (e) => assert.doesNotMatch(e.message, /blocked|frozen|dormant|closed/))
  if (outcome === no) assert.deepEqual(await moneyOf(payer), payerBefore, 'the payer too')
  return outcome
}))

test('status table - bulk batch (funding)', () => row('bulk batch (funding)', (s) => observe(s,
  () => p.client.bulkPayments.initiate(batchBody(s.entityId, [payment(1), payment(2)],
    { account_id: s.accountId })),
  debited(20_000))))

test('status table - card authorization', () => row('card authorization', async (s) => {
  const body = purchase(s.cardId, 1_000)
  if (s.status === 'active') {
    await expectApproved(tb, body)
    return ok
  }
  await expectDecline(tb, p, s.accountId, body, declineOf(s.status))
  return no
}))

test('status table - incoming credit from another bank: a blocked account sends it back AC06', () => row('incoming credit', async (s) => {
  const before = await moneyOf(s.accountId)
  const reply = await tb.operator.sandbox.incoming({ account_number: s.number, amount: 700 })
  if (reply.status === 'credited') {
    assert.equal(await available(s.accountId), Number(before.balances.available) + 700)
    return ok
  }
  assert.deepEqual([reply.status, reply.reason_code, reply.tx_id],
    ['returned', returnCodeOf(s.status), null])
  assert.deepEqual(await moneyOf(s.accountId), before, 'a return moves nothing')
  return no
}))

function orderStatus(s: Subject, orderId: string) {
  return p.client.debitOrders.status({ entity_id: s.entityId, debit_order_id: orderId })
}

/** Watches what the collection runs send to the debtors' banks, while `during` runs. */
async function submittedDuring(during: () => Promise<void>): Promise<Set<string>> {
  const rail = tb.bank.services.debitRail
  const submit = rail.submitCollections
  const sent = new Set<string>()
  rail.submitCollections = (requests: DebitCollectionRequest[]) => {
    for (const r of requests) sent.add(r.debit_order_id)
    return submit.call(rail, requests)
  }
  try {
    await during()
  } finally {
    rail.submitCollections = submit
  }
  return sent
}

test('status table - debit-order collection (credit): one into a blocked account is not submitted and fails saying why', async () => {
  await advanceTo(tb, sast('2026-11-26', '23:30'))
  const before = new Map<Status, Awaited<ReturnType<typeof moneyOf>>>()
  for (const s of subjects.values()) before.set(s.status, await moneyOf(s.accountId))
  const sent = await submittedDuring(() => advanceTo(tb, sast('2026-11-27', '00:30')))
  await row('debit-order collection', async (s) => {
    const status = await orderStatus(s, s.laterOrder)
    if (status.status === 'successful') {
      assert.ok(sent.has(s.laterOrder))
      const rows = await debitRowsOf(tb, s.accountId)
      assert.equal(rows.filter((r) => r.tx_type === 'debit_order').length, 2)
      assert.equal(Number(rows.at(-1)!.credit), net)
      return ok
    }
    assert.equal(status.status, 'failed')
    assert.equal(sent.has(s.laterOrder), false, 'not submitted to the debtor\'s bank')
    assert.match(status.status_history.at(-1)!.description,
      /the account cannot receive payments/)
    const [collection] = await collectionsOf(tb, s.laterOrder)
    assert.deepEqual([collection?.status, Number(collection?.attempts)], ['failed', 0],
      'no attempt counted')
    const failed = (await eventsOf(tb, s.laterOrder)).at(-1)!
    assert.equal(failed.type, 'debit_order.failed')
    assert.match(JSON.stringify(failed.data), /the account cannot receive payments/)
    assert.deepEqual(await moneyOf(s.accountId), before.get(s.status), 'nothing credited')
    return no
  })
})

test('status table - debit-order dispute: never refused, but from an account that is not active the whole amount is owed by the partner', async () => {
  // The debtor disputes on 28 November (3 days after the collection); Monday's run books it.
  await advanceTo(tb, sast('2026-11-29', '23:30'))
  const before = new Map<Status, number>()
  for (const s of subjects.values()) {
    before.set(s.status, Number((await balances(p, s.accountId)).balance))
  }
  const debtBefore = await debtOf(tb, p.partnerId)
  await advanceTo(tb, sast('2026-11-30', '00:30'))
  let owedNow = debtBefore
  await row('debit-order dispute', async (s) => {
    const status = await orderStatus(s, s.disputedOrder)
    assert.equal(status.status, 'disputed', `${s.status}: the dispute is booked`)
    assert.equal((await eventsOf(tb, s.disputedOrder)).at(-1)!.type, 'debit_order.disputed')
    const rows = await debitRowsOf(tb, s.accountId)
    const reversal = rows.find((r) => r.tx_type === 'reversal')
    assert.ok(reversal, `${s.status}: the credit is reversed`)
    assert.equal(rows.find((r) => r.id === reversal.parent_tx_id)?.status, 'Reversed')
    const balance = Number((await balances(p, s.accountId)).balance)
    if (Number(reversal.debit) === net) {
      assert.equal(balance, before.get(s.status)! - net)
      return ok
    }
    assert.equal(Number(reversal.debit), 0, `${s.status}: nothing taken from the account`)
    assert.equal(balance, before.get(s.status))
    assert.match(status.status_history.at(-1)!.description,
      new RegExp(`${s.status}.*${net} cents .*owed by the partner`))
    owedNow += net
    return owed
  })
  assert.equal(await debtOf(tb, p.partnerId), owedNow)
  assert.equal(owedNow, debtBefore + 3 * net)
})

test('status table - the partner\'s debt is recovered from a credit to an active account, never from one that is not active', async () => {
  const owing = await debtOf(tb, p.partnerId)
  const frozen = subject('frozen').accountId
  const frozenBefore = await balances(p, frozen)
  await fund(tb, frozen, 5_000)
  assert.equal(Number((await balances(p, frozen)).balance), Number(frozenBefore.balance) + 5_000)
  assert.equal(await debtOf(tb, p.partnerId), owing)
  const active = subject('active').accountId
  const activeBefore = Number((await balances(p, active)).balance)
  // A credit pays the debt from the account's whole available balance, not only from itself.
  await fund(tb, active, 5_000)
  assert.equal(Number((await balances(p, active)).balance), activeBefore + 5_000 - owing)
  assert.equal(await debtOf(tb, p.partnerId), 0)
  const report = await assertLedgerClean(tb)
  assert.equal(report.internal_balances[`partner_debt:${p.partnerId}`], '0')
})
