import { sql, type Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { LedgerDatabase, LedgerExecutor } from './ledger-tables.ts'
import { AccountNotActive, InsufficientFunds, InvalidState, NotFound, Unprocessable } from '../errors.ts'
import { takesCredits } from './account-status.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { centsText } from './cents.ts'
import type { Journal } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import type { ComposedWriter } from './ledger-writer.ts'
import { newRowId } from './row-id.ts'
import { verifyLedger, type LedgerReport, type VerifyOptions } from './ledger-verification.ts'
import { recordVerifyResult, type VerifyResult } from './verify-result.ts'

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

function movedOf(batch: Journal, txId: string, accountId: string, amount: bigint): Moved {
  const a = batch.account(accountId)
  return { txId, accountId, amount, balance: a.balance, available: a.balance - a.held }
}

// Operator-side ledger use cases: inbound deposits (how a sandbox partner funds an
// account) and the full verification behind `bank ledger verify`. Their money moves through
// the writer's composed door (ledger-writer.ts `write`), as every capability's does.
export class LedgerService {
  constructor(
    private readonly db: LedgerDatabase,
    private readonly writer: ComposedWriter,
  ) {}

  /**
   * Deletes up to `chunk` idempotency keys (`transfer_keys`) last used before `cutoff`,
   * oldest first; resolves with how many. The transfers' daily key expiry calls it
   * (transfers/transfer-key-expiry.ts): the keys are the writer's, so is their SQL.
   */
  async expireKeys(cutoff: Date, chunk: number): Promise<number> {
    const { numAffectedRows } = await sql`
      delete from transfer_keys where ctid = any(array(
        select ctid from transfer_keys where created_at < ${cutoff}::timestamptz
        order by created_at limit ${chunk}))`.execute(this.db)
    return Number(numAffectedRows ?? 0n)
  }

  /**
   * Credits an account as an inbound EFT would: settlement:EFT → customer. `addedBy` is the
   * operator's credential id: money an operator moves is always attributed.
   */
  async deposit(accountId: string, amount: bigint, ref: string, addedBy: string): Promise<Moved> {
    return this.db.transaction().execute((trx) => this.depositIn(trx, accountId, amount, ref,
      addedBy))
  }

  /**
   * The deposit inside the caller's transaction (an approval moves the money with its decision).
   */
  depositIn(trx: LedgerExecutor, accountId: string, amount: bigint, ref: string,
      addedBy: string): Promise<Moved> {
    return this.writer.write(trx, deposit, { accountId, amount, ref, addedBy })
  }

  /** The deposit a reversal would undo, checked: it exists, is a deposit, and stands. */
  async reversible(executor: LedgerExecutor, txId: string, lock: boolean): Promise<{
      account_id: string; amount: bigint; ref: string }> {
    let query = executor.selectFrom('transactions').select(['account_id', 'amount', 'tx_type',
      'status', 'ref']).where('id', '=', txId)
    if (lock) query = query.forUpdate()
    const row = await query.executeTakeFirst()
    if (!row) throw new NotFound('transaction')
    if (row.tx_type !== 'deposit') throw new Unprocessable(
      `only a deposit can be reversed by an operator; this transaction is a ${row.tx_type}`)
    if (row.status !== 'Successful') throw new InvalidState(
      `the deposit is ${row.status}, not Successful: it cannot be reversed`, [], 409)
    return { account_id: row.account_id, amount: BigInt(row.amount), ref: row.ref }
  }

  /**
   * Takes a deposit back out of its account (settlement:EFT ← customer) as a `reversal`
   * transaction whose parent is the deposit; the deposit becomes `Reversed`. The account
   * must have the amount available.
   */
  async reverse(txId: string, reason: string, addedBy: string): Promise<Moved> {
    return this.db.transaction().execute((trx) => this.reverseIn(trx, txId, reason, addedBy))
  }

  async reverseIn(trx: LedgerExecutor, txId: string, reason: string,
      addedBy: string): Promise<Moved> {
    const found = await this.reversible(trx, txId, true)
    return this.writer.write(trx, depositReversal, { txId, reason, addedBy, ...found })
  }

  /** An account's balances as a dual-control request shows them (nothing moved yet). */
  async balances(executor: LedgerExecutor, accountId: string): Promise<{ balance: bigint;
      available: bigint }> {
    const row = await executor.selectFrom('accounts').select(['balance', 'held']).where('id', '=',
      accountId).executeTakeFirst()
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

  /** Records a verify's outcome (verify-result.ts), for the operators' metrics. */
  recordVerify(result: VerifyResult): Promise<void> {
    return recordVerifyResult(this.db, result)
  }
}

interface Deposit {
  accountId: string
  amount: bigint
  ref: string
  addedBy: string
}

/**
 * A deposit: settlement:EFT → customer; a partner that owes the bank pays its debt first. A
 * blocked or closed account takes none (account-status.ts).
 */
const deposit: JournalKind<Deposit, Moved> = {
  name: 'deposit',
  accountsOf: (d) => [d.accountId],
  debts: true,
  record(journal, d, { debts }) {
    if (!journal.has(d.accountId)) throw new NotFound('account')
    const status = journal.account(d.accountId).status
    if (!takesCredits(status)) {
      throw new AccountNotActive('account_id', d.accountId, status, 'credited')
    }
    const txId = newRowId()
    noteCommitTargets(txId)
    journal.post([
      { internal: 'settlement:EFT', amount: -d.amount, tx_id: txId },
      { account: d.accountId, amount: d.amount, tx_id: txId },
    ])
    journal.append({
      id: txId,
      account_id: d.accountId,
      tx_type: 'deposit',
      tx_payment_type: 'EFT',
      status: 'Successful',
      amount: d.amount,
      credit: d.amount,
      debit: 0n,
      ref: d.ref,
      added_by: d.addedBy,
      posted: true,
    })
    // A partner that owes the bank (a disputed debit order's shortfall) pays it first.
    const partnerId = journal.account(d.accountId).partner_id
    debts!.recover(journal, d.accountId, partnerId, txId)
    return movedOf(journal, txId, d.accountId, d.amount)
  },
}

interface Reversal {
  txId: string
  account_id: string
  amount: bigint
  ref: string
  reason: string
  addedBy: string
}

/** A deposit taken back (settlement:EFT ← customer): the deposit becomes `Reversed`. */
const depositReversal: JournalKind<Reversal, Moved> = {
  name: 'deposit.reversal',
  accountsOf: (r) => [r.account_id],
  record(journal, r) {
    const accountId = r.account_id
    if (journal.available(accountId) < r.amount) {
      const available = centsText(journal.available(accountId))
      const needed = centsText(r.amount)
      throw new InsufficientFunds('tx_id',
        `the account has ${available} cents available; the reversal needs ${needed}`, 422)
    }
    const reversalId = newRowId()
    noteCommitTargets(reversalId, r.txId, accountId)
    journal.post([
      { account: accountId, amount: -r.amount, tx_id: reversalId },
      { internal: 'settlement:EFT', amount: r.amount, tx_id: reversalId },
    ])
    journal.setStatus(r.txId, accountId, { status: 'Reversed', reason: r.reason })
    journal.append({
      id: reversalId,
      account_id: accountId,
      parent_tx_id: r.txId,
      tx_type: 'reversal',
      tx_payment_type: 'EFT',
      status: 'Successful',
      amount: r.amount,
      credit: 0n,
      debit: r.amount,
      ref: r.ref,
      added_by: r.addedBy,
      posted: true,
      status_reason: r.reason,
    })
    return movedOf(journal, reversalId, accountId, r.amount)
  },
}
