import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { TestBank, TestPartner } from '../support/harness.ts'

// What the collection-run tests share: orders under a mandate of their own (a once_off
// mandate serves one order), the sandbox clock moved forward through ops.sandbox, and
// reads of what a run left behind (status, events, ledger rows, partner debt).

/**
 * The simulated debit rail's magic debtor accounts (src/rails/simulated-debit-rail.ts), spelled out
 * so a change there is noticed.
 */
export const debtors = {
  ordinary: '1234567890',
  mandateRejected: '5000000001',
  mandatePendingADay: '5000000002',
  accountClosed: '5000000003',
  insufficientForEver: '5000000004',
  disputed: '5000000005',
  /** `50000001NN`: insufficient funds on the first NN attempts. */
  insufficientTimes: (n: number) => `50000001${String(n).padStart(2, '0')}`,
}

export const fee = 350

/** A SAST wall-clock time as an RFC 3339 instant. */
export function sast(date: string, hhmm = '00:30'): string {
  return new Date(Date.parse(`${date}T${hhmm}:00+02:00`)).toISOString()
}

/**
 * The longest single advance: each answers before the SDK's request timeout, whatever falls due on
 * the way.
 */
const advance_step_ms = 7 * 86_400_000

/**
 * Moves the bank's clock forward through ops.sandbox (running what falls due), a week at a time;
 * never back.
 */
export async function advanceTo(tb: TestBank, at: string): Promise<void> {
  const target = Date.parse(at)
  for (let now = tb.clock.now().getTime(); now < target; now = tb.clock.now().getTime()) {
    await tb.operator.sandbox.advance(
      { to: new Date(Math.min(target, now + advance_step_ms)).toISOString() })
  }
}

export interface OrderOptions {
  account_number?: string
  frequency?: 'once_off' | 'weekly' | 'monthly' | 'annually'
  amount?: number
  collection_date: string
  end_date?: string
  tracking_days?: number
}

/** Registers a mandate of its own (authenticated by running the due jobs) and an order under it. */
export async function newOrder(tb: TestBank, p: TestPartner,
    options: OrderOptions): Promise<string> {
  const debtor = {
    account_holder_name: 'Thandi Nkosi',
    account_number: options.account_number ?? debtors.ordinary,
    account_type: 'cheque' as const,
    branch_code: '250655',
  }
  const frequency = options.frequency ?? 'once_off'
  const mandate_reference = `M-${randomUUID().slice(0, 8)}`
  await p.client.mandates.create({ entity_id: p.rootEntityId, mandate_reference, ...debtor,
    max_amount: 1_000_000, frequency })
  await tb.bank.services.jobRunner.runDue()
  const mandate = await p.client.mandates.get({ entity_id: p.rootEntityId, mandate_reference })
  assert.equal(mandate.status, 'active', `mandate of ${debtor.account_number} is active`)
  const created = await p.client.debitOrders.create({
    entity_id: p.rootEntityId,
    clientTxId: randomUUID(),
    mandate_reference,
    amount: options.amount ?? 10_000,
    collection_date: options.collection_date,
    ...debtor,
    reference: 'Gym fees',
    frequency,
    ...(options.end_date ? { end_date: options.end_date } : {}),
    ...(options.tracking_days !== undefined ? { tracking_days: options.tracking_days } : {}),
  } as Parameters<TestPartner['client']['debitOrders']['create']>[0])
  return created.debit_order_id
}

export function statusOf(p: TestPartner, id: string) {
  return p.client.debitOrders.status({ entity_id: p.rootEntityId, debit_order_id: id })
}

export async function poolAccountOf(p: TestPartner): Promise<string> {
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  return accounts[0]!.account_id
}

export async function balanceOf(p: TestPartner, accountId: string): Promise<{ balance: number;
    available: number }> {
  const account = await p.client.accounts.getDetails({ account_id: accountId })
  return { balance: Number(account.balance), available: Number(account.available_balance) }
}

/** The types of the events announced about one order, in order. */
export async function eventTypesOf(tb: TestBank, orderId: string): Promise<string[]> {
  const rows = await tb.bank.database.db.selectFrom('events').select('type').where('resource_id',
    '=', orderId).orderBy('seq').execute()
  return rows.map((row) => row.type)
}

export async function eventsOf(tb: TestBank, orderId: string): Promise<Array<{ type: string;
    data: Record<string, unknown> }>> {
  const rows = await tb.bank.database.db.selectFrom('events').select(['type', 'data']).where(
    'resource_id', '=', orderId).orderBy('seq').execute()
  return rows.map((row) => ({ type: row.type, data: (typeof row.data === 'string'
    ? JSON.parse(row.data) : row.data) as Record<string, unknown> }))
}

/** The ledger rows a debit order's collections and disputes wrote on the account. */
export async function debitRowsOf(tb: TestBank, accountId: string) {
  return tb.bank.database.db
    .selectFrom('transactions')
    .select(['id', 'tx_type', 'tx_payment_type', 'status', 'amount', 'fee', 'credit', 'debit',
      'parent_tx_id', 'own_ref'])
    .where('account_id', '=', accountId)
    .where('tx_payment_type', '=', 'DEBIT_ORDER')
    .orderBy('seq')
    .execute()
}

/** What the partner owes the bank, as recorded. */
export async function debtOf(tb: TestBank, partnerId: string): Promise<number> {
  const row = await tb.bank.database.db.selectFrom('partner_debts').select('owed').where(
    'partner_id', '=', partnerId).executeTakeFirst()
  return row ? Number(row.owed) : 0
}

export async function collectionsOf(tb: TestBank, orderId: string) {
  return tb.bank.database.db
    .selectFrom('debit_collections')
    .select(['collection_date', 'status', 'attempts', 'net_amount'])
    .where('debit_order_id', '=', orderId)
    .orderBy('collection_date')
    .execute()
}

export async function assertLedgerClean(tb: TestBank): Promise<Record<string, string>> {
  const report = await tb.operator.ledger.verify({})
  assert.deepEqual(report.problems, [])
  assert.equal(report.ok, true)
  return report.internal_balances
}
