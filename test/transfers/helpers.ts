import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { BankClient } from '../../src/client/index.ts'
import type { TestBank, TestPartner } from '../support/harness.ts'

// What the transfer, transaction and ledger tests share. The harness and the shared
// assertions live in test/support.

export type TransferBody = Parameters<BankClient['accounts']['transfer']>[0]
export type InternalTransferBody = Parameters<BankClient['accounts']['transferInternal']>[0]
export type TransactionView =
  Awaited<ReturnType<BankClient['accounts']['getTransaction']>>['transaction']

export const shaPattern = /^[0-9a-f]{64}$/
/** RFC 3339 in UTC (docs/guides/wire-conventions.md): `Z`, milliseconds allowed. */
export const utcPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/

export const hour_ms = 3_600_000
export const day_ms = 24 * hour_ms

/** A SAST wall-clock time as the UTC instant the clock takes. */
export function sast(date: string, hhmm: string): string {
  return new Date(Date.parse(`${date}T${hhmm}:00+02:00`)).toISOString()
}

/**
 * The simulated rail's magic recipients (src/rails/simulated-rail.ts), spelled out so a change
 * there is noticed.
 */
export const magic = {
  failed: '4000000002',
  invalid: '4000000010',
  returned: '4000000028',
  invalidBranch: '000000',
}

/** A valid single-transfer request to an ordinary recipient; tests override what they are about. */
export function transferBody(accountId: string, overrides: Record<string,
    unknown> = {}): TransferBody {
  return {
    account_id: accountId,
    clientTxId: randomUUID(),
    amount: 10_000,
    ref: 'Invoice 42',
    own_ref: 'INV-42 supplier',
    account_number: '62000000001',
    branch_code: '250655',
    name: 'Jane Recipient',
    ...overrides,
  } as TransferBody
}

/**
 * A valid internal payment to the account with `payeeNumber`; tests override what they are about.
 */
export function internalBody(accountId: string, payeeNumber: string, overrides: Record<string,
    unknown> = {}): InternalTransferBody {
  return {
    account_id: accountId,
    clientTxId: randomUUID(),
    amount: 10_000,
    ref: 'Rent November',
    own_ref: 'Rent to landlord',
    account_number: payeeNumber,
    name: 'Landlord Account',
    ...overrides,
  } as InternalTransferBody
}

/** The account number of one of the partner's accounts. */
export async function accountNumberOf(p: TestPartner, accountId: string): Promise<string> {
  return (await p.client.accounts.getDetails({ account_id: accountId })).account_number
}

/** A further account under the partner's (approved) root entity, so each test starts from zero. */
export async function newAccount(p: TestPartner): Promise<string> {
  const created = await p.client.accounts.create({ entity_id: p.rootEntityId })
  return created.account_id
}

/** The pool account created when the root entity was approved. */
export async function poolAccount(p: TestPartner): Promise<string> {
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  const pool = accounts[0]
  assert.ok(pool, 'an approved root entity has its pool account')
  return pool.account_id
}

export async function fund(tb: TestBank, accountId: string, amount: number,
    ref = 'funding'): Promise<string> {
  const deposited = await tb.operator.accounts.deposit({ account_id: accountId, amount, ref })
  assert.ok(deposited.tx_id, 'the deposit moved money (no dual control in this bank)')
  return deposited.tx_id
}

export async function balances(p: TestPartner, accountId: string): Promise<{
    balance: string; available: string }> {
  const details = await p.client.accounts.getDetails({ account_id: accountId })
  return { balance: details.balance, available: details.available_balance }
}

/** Every transaction of an account, newest first, in one page (tests stay under 1000 rows). */
export async function transactionsOf(p: TestPartner,
    accountId: string): Promise<TransactionView[]> {
  const page = await p.client.accounts.listTransactions({ account_id: accountId, limit: 1000 })
  assert.equal(page.next_cursor, undefined, 'the test expected one page')
  return page.transactions
}

export async function txById(p: TestPartner, txId: string): Promise<TransactionView> {
  return (await p.client.accounts.getTransaction({ tx_id: txId })).transaction
}

/** The fee row that belongs to a transfer (parent_tx_id), if there is one. */
export function feeOf(rows: TransactionView[], txId: string): TransactionView | undefined {
  const fees = rows.filter((r) => r.tx_type === 'fee' && r.parent_tx_id === txId)
  assert.ok(fees.length <= 1, `at most one fee row per transfer, found ${fees.length}`)
  return fees[0]
}

/** A snapshot of everything a refused request must leave unchanged. */
export async function snapshot(p: TestPartner, accountId: string) {
  return {
    details: await p.client.accounts.getDetails({ account_id: accountId }),
    transactions: await transactionsOf(p, accountId),
  }
}
