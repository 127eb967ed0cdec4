import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { ManualClock } from '../../src/clock.ts'
import { collectionKey, type DebitCollectionRequest, type DebitMandateRequest } from '../../src/rails/debit-rail.ts'
import { magicDebtors, SimulatedDebitRail } from '../../src/rails/simulated-debit-rail.ts'
import { emptyDatabase, migrateTo, type TestDatabase } from '../support/empty-database.ts'

// The simulated debit rail on its own, on an empty database of the storage under test
// migrated by the application's migrations: every magic debtor account number, answers
// that are the same when asked again, and disputes kept until acknowledged.

let store: TestDatabase
const clock = new ManualClock('2026-11-23T08:00:00Z')
let rail: SimulatedDebitRail

before(async () => {
  store = await emptyDatabase()
  await migrateTo(store.db)
  rail = new SimulatedDebitRail(store.db, clock)
})

after(async () => {
  await store.close()
})

function mandate(account_number: string): DebitMandateRequest {
  return {
    mandate_id: randomUUID(),
    mandate_reference: 'MANDATE-1',
    account_holder_name: 'A Debtor',
    account_number,
    account_type: 'cheque',
    branch_code: '250655',
    max_amount: 100_000n,
    frequency: 'monthly',
    presented_at: clock.now(),
  }
}

function collection(account_number: string, attempt = 1): DebitCollectionRequest {
  return {
    debit_order_id: randomUUID(),
    collection_date: '2026-11-25',
    attempt,
    amount: 10_000n,
    account_holder_name: 'A Debtor',
    account_number,
    account_type: 'cheque',
    branch_code: '250655',
    mandate_reference: 'MANDATE-1',
    reference: 'GYM NOV',
  }
}

async function outcomeOf(c: DebitCollectionRequest) {
  return (await rail.submitCollections([c])).get(collectionKey(c))
}

test('simulated debit rail - mandates: active at once, rejected, or pending until a day has passed', async () => {
  assert.deepEqual(await rail.authenticateMandate(mandate('62000000017')), { status: 'active' })
  const rejected = await rail.authenticateMandate(mandate(magicDebtors.mandate_rejected))
  assert.equal(rejected.status, 'rejected')
  const pending = mandate(magicDebtors.mandate_pending_a_day)
  assert.deepEqual(await rail.authenticateMandate(pending),
    { status: 'pending', retry_after: new Date('2026-11-24T08:00:00Z') })
  const later = new SimulatedDebitRail(store.db, new ManualClock('2026-11-24T07:59:59.999Z'))
  assert.equal((await later.authenticateMandate(pending)).status, 'pending')
  const dayLater = new SimulatedDebitRail(store.db, new ManualClock('2026-11-24T08:00:00Z'))
  assert.deepEqual(await dayLater.authenticateMandate(pending), { status: 'active' })
})

test('simulated debit rail - collections: every magic account and an ordinary one', async () => {
  const ordinary = await outcomeOf(collection('62000000017'))
  assert.equal(ordinary?.status, 'collected')
  assert.match(ordinary.status === 'collected' ? ordinary.bank_reference : '', /^SIMDO[0-9A-F]{12}$/)
  assert.equal((await outcomeOf(collection(magicDebtors.always_collects)))?.status, 'collected')
  assert.equal((await outcomeOf(collection(magicDebtors.account_closed)))?.status, 'account_closed')
  assert.equal((await outcomeOf(collection(magicDebtors.insufficient_funds, 1)))?.status,
    'insufficient_funds')
  assert.equal((await outcomeOf(collection(magicDebtors.insufficient_funds, 31)))?.status,
    'insufficient_funds')
  // 5000000102: the first two attempts find insufficient funds, the third collects.
  const twice = `${magicDebtors.insufficient_then_collects_prefix}02`
  assert.equal((await outcomeOf(collection(twice, 1)))?.status, 'insufficient_funds')
  assert.equal((await outcomeOf(collection(twice, 2)))?.status, 'insufficient_funds')
  assert.equal((await outcomeOf(collection(twice, 3)))?.status, 'collected')
})

test('simulated debit rail - the same collection asked again gets the same answer', async () => {
  const c = collection('62000000017')
  const [first, second] = [await outcomeOf(c), await outcomeOf(c)]
  assert.deepEqual(first, second)
})

test('simulated debit rail - a collection from the disputed account is disputed 3 days later, until acknowledged', async () => {
  const c = collection(magicDebtors.disputed)
  const outcome = await outcomeOf(c)
  assert.equal(outcome?.status, 'collected')
  await outcomeOf(c) // submitted again after a crash: still one dispute
  const mine = async (at: string) =>
    (await new SimulatedDebitRail(store.db, new ManualClock(at)).collectDisputes()).filter(
      (d) => d.debit_order_id === c.debit_order_id)
  assert.deepEqual(await mine('2026-11-26T07:59:59Z'), [])
  const due = await mine('2026-11-26T08:00:00Z')
  assert.equal(due.length, 1)
  assert.equal(due[0]!.bank_reference, outcome.status === 'collected' ? outcome.bank_reference : '')
  assert.equal(due[0]!.collection_date, '2026-11-25')
  // handed out again until acknowledged
  assert.equal((await mine('2026-11-27T08:00:00Z')).length, 1)
  await new SimulatedDebitRail(store.db,
    new ManualClock('2026-11-27T08:00:00Z')).acknowledgeDisputes([collectionKey(c)])
  assert.deepEqual(await mine('2026-11-28T08:00:00Z'), [])
})

test('simulated debit rail - an operator raises a dispute now', async () => {
  const c = { debit_order_id: randomUUID(), collection_date: '2026-11-25',
    bank_reference: 'SIMDO000000000000' }
  await rail.raiseDispute(c)
  await rail.raiseDispute(c)
  const disputes = (await rail.collectDisputes()).filter(
    (d) => d.debit_order_id === c.debit_order_id)
  assert.equal(disputes.length, 1)
})
