import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { LedgerDatabase, LedgerExecutor } from './ledger-tables.ts'
import { Conflict, NotFound, Unprocessable } from '../errors.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { centsText } from './cents.ts'
import { LedgerBatch } from './ledger-batch.ts'
import type { KnownAccounts } from './known-accounts.ts'
import { newRowId } from './row-id.ts'
import { PartnerDebts } from './partner-debt.ts'
import { verifyLedger, type LedgerReport, type VerifyOptions } from './ledger-verification.ts'

export type { LedgerProblem, LedgerReport } from './ledger-verification.ts'

/**
 * What a deposit or reversal moved, and the account's balances right after it. The
 * operator's reply (`MoneyMoved`, money/money-contract.ts) is made from it by dual control,
 * which also answers the requests that wait for a second operator: the ledger formats
 * nothing for the wire.
 */
export interface Moved {
  txId: string
  accountId: string
  amount: bigint
  balance: bigint
  available: bigint
}

function movedOf(batch: LedgerBatch, txId: string, accountId: string, amount: bigint): Moved {
  const a = batch.account(accountId)
  return { txId, accountId, amount, balance: a.balance, available: a.balance - a.held }
}

// Operator-side ledger use cases: inbound deposits (how a sandbox partner funds an
// account) and the full verification behind `bank ledger verify`.
export class LedgerService {
  constructor(
    private readonly db: LedgerDatabase,
    private readonly clock: Clock,
    /** What payment batches remember of accounts (known-accounts.ts): a deposit makes it stale. */
    private readonly known?: KnownAccounts,
  ) {}

  /**
   * Credits an account as an inbound EFT would: settlement:EFT → customer. `addedBy` is the
   * operator's credential id: money an operator moves is always attributed.
   */
  async deposit(accountId: string, amount: bigint, ref: string, addedBy: string): Promise<Moved> {
    try {
      return await this.db.transaction().execute((trx) => this.depositIn(trx, accountId, amount, ref, addedBy))
    } finally {
      this.known?.forget([accountId])
    }
  }

  /** The deposit inside the caller's transaction (an approval moves the money with its decision). */
  async depositIn(trx: LedgerExecutor, accountId: string, amount: bigint, ref: string, addedBy: string): Promise<Moved> {
    const batch = await LedgerBatch.open(trx, this.clock, [accountId])
    if (!batch.has(accountId)) throw new NotFound('account')
    const txId = newRowId()
    noteCommitTargets(txId)
    batch.post([
      { internal: 'settlement:EFT', amount: -amount, tx_id: txId },
      { account: accountId, amount, tx_id: txId },
    ])
    batch.append({
      id: txId,
      account_id: accountId,
      tx_type: 'deposit',
      tx_payment_type: 'EFT',
      status: 'Successful',
      amount,
      credit: amount,
      debit: 0n,
      ref,
      added_by: addedBy,
      posted: true,
    })
    // A partner that owes the bank (a disputed debit order's shortfall) pays it first.
    const debts = await PartnerDebts.open(trx, [batch.account(accountId).partner_id], batch.now)
    debts.recover(batch, accountId, batch.account(accountId).partner_id, txId)
    await batch.flush()
    await debts.flush()
    this.known?.forget([accountId])
    return movedOf(batch, txId, accountId, amount)
  }

  /** The deposit a reversal would undo, checked: it exists, is a deposit, and stands. */
  async reversible(executor: LedgerExecutor, txId: string, lock: boolean): Promise<{ account_id: string; amount: bigint; ref: string }> {
    let query = executor.selectFrom('transactions').select(['account_id', 'amount', 'tx_type', 'status', 'ref']).where('id', '=', txId)
    if (lock) query = query.forUpdate()
    const row = await query.executeTakeFirst()
    if (!row) throw new NotFound('transaction')
    if (row.tx_type !== 'deposit') throw new Unprocessable(`only a deposit can be reversed by an operator; this transaction is a ${row.tx_type}`)
    if (row.status !== 'Successful') throw new Conflict(`the deposit is ${row.status}, not Successful: it cannot be reversed`)
    return { account_id: row.account_id, amount: BigInt(row.amount), ref: row.ref }
  }

  /**
   * Takes a deposit back out of its account (settlement:EFT ← customer) as a `reversal`
   * transaction whose parent is the deposit; the deposit becomes `Reversed`. The account
   * must have the amount available.
   */
  async reverse(txId: string, reason: string, addedBy: string): Promise<Moved> {
    let accountId: string | undefined
    try {
      return await this.db.transaction().execute(async (trx) => {
        const result = await this.reverseIn(trx, txId, reason, addedBy)
        accountId = result.accountId
        return result
      })
    } finally {
      if (accountId) this.known?.forget([accountId])
    }
  }

  async reverseIn(trx: LedgerExecutor, txId: string, reason: string, addedBy: string): Promise<Moved> {
    const deposit = await this.reversible(trx, txId, true)
    const accountId = deposit.account_id
    const batch = await LedgerBatch.open(trx, this.clock, [accountId])
    if (batch.available(accountId) < deposit.amount) {
      throw new Unprocessable(`the account has ${centsText(batch.available(accountId))} cents available; the reversal needs ${centsText(deposit.amount)}`)
    }
    const reversalId = newRowId()
    noteCommitTargets(reversalId, txId, accountId)
    batch.post([
      { account: accountId, amount: -deposit.amount, tx_id: reversalId },
      { internal: 'settlement:EFT', amount: deposit.amount, tx_id: reversalId },
    ])
    batch.setStatus(txId, accountId, { status: 'Reversed', reason })
    batch.append({
      id: reversalId,
      account_id: accountId,
      parent_tx_id: txId,
      tx_type: 'reversal',
      tx_payment_type: 'EFT',
      status: 'Successful',
      amount: deposit.amount,
      credit: 0n,
      debit: deposit.amount,
      ref: deposit.ref,
      added_by: addedBy,
      posted: true,
      status_reason: reason,
    })
    await batch.flush()
    this.known?.forget([accountId])
    return movedOf(batch, reversalId, accountId, deposit.amount)
  }

  /** An account's balances as a dual-control request shows them (nothing moved yet). */
  async balances(executor: LedgerExecutor, accountId: string): Promise<{ balance: bigint; available: bigint }> {
    const row = await executor.selectFrom('accounts').select(['balance', 'held']).where('id', '=', accountId).executeTakeFirst()
    if (!row) throw new NotFound('account')
    const balance = BigInt(row.balance)
    return { balance, available: balance - BigInt(row.held) }
  }

  /**
   * `ledger verify` (ledger-verification.ts): everything recomputed, or with `incremental`
   * only what came after the last clean verify's checkpoints.
   */
  verify(options: VerifyOptions = {}): Promise<LedgerReport> {
    return verifyLedger(this.db, options)
  }
}
