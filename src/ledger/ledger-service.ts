import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { LedgerDatabase, LedgerExecutor } from './ledger-tables.ts'
import { Conflict, NotFound, Unprocessable } from '../errors.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { cents, centsText } from './cents.ts'
import { LedgerBatch } from './ledger-batch.ts'
import type { KnownAccounts } from './known-accounts.ts'
import { newRowId } from './row-id.ts'
import {
  accountHeads,
  chainPage,
  internalBalances,
  journalCount,
  postingsTotal,
  unbalancedJournals,
  type AccountLedgerHead,
} from './ledger-store.ts'
import { rowHashHolds } from './tx-chain.ts'
import { debtAccount, PartnerDebts, recordedDebts } from './partner-debt.ts'

/** One mismatch `ledger verify` found (the `ops.ledger.verify` reply lists them). */
export interface LedgerProblem {
  kind: string
  account_id?: string
  tx_id?: string
  journal_id?: string
  message: string
}

/** What `ledger verify` checked and found; the operator's reply adds the audit chain's check. */
export interface LedgerReport {
  ok: boolean
  accounts_checked: number
  transactions_checked: number
  journals_checked: number
  postings_total: string
  internal_balances: Record<string, string>
  problems: LedgerProblem[]
}

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

const verify_page_rows = 5000
const problems_max = 1000

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
   * Recomputes every balance and hold from postings and pending rows, checks that every
   * journal sums to zero, walks every account's hash chain and running balances.
   */
  async verify(): Promise<LedgerReport> {
    const problems: LedgerProblem[] = []
    const report = (p: LedgerProblem) => {
      if (problems.length < problems_max) problems.push(p)
    }
    const journals = await unbalancedJournals(this.db)
    for (const j of journals) report({ kind: 'journal_unbalanced', journal_id: j.journal_id, message: `postings sum to ${j.total}` })
    const journalsChecked = await journalCount(this.db)
    const total = await postingsTotal(this.db)
    if (total !== 0n) report({ kind: 'ledger_unbalanced', message: `all postings sum to ${total}` })
    const internal = await internalBalances(this.db)
    await this.verifyDebts(internal, report)

    const accounts = await accountHeads(this.db)
    let transactionsChecked = 0
    for (const account of accounts) {
      transactionsChecked += await this.verifyAccount(account, report)
    }
    return {
      ok: problems.length === 0,
      accounts_checked: accounts.length,
      transactions_checked: transactionsChecked,
      journals_checked: journalsChecked,
      postings_total: centsText(total),
      internal_balances: Object.fromEntries([...internal].map(([name, balance]) => [name, centsText(balance)])),
      problems,
    }
  }

  /**
   * A partner's recorded debt (partner_debts) is what its `partner_debt:<id>` postings say
   * it owes, and no partner is ever owed by the debt account (over-recovered).
   */
  private async verifyDebts(internal: Map<string, bigint>, report: (p: LedgerProblem) => void): Promise<void> {
    const recorded = await recordedDebts(this.db)
    const partners = new Set([...recorded.keys(), ...[...internal.keys()].filter((n) => n.startsWith('partner_debt:')).map((n) => n.slice('partner_debt:'.length))])
    for (const partnerId of partners) {
      const posted = -(internal.get(debtAccount(partnerId)) ?? 0n)
      const owed = recorded.get(partnerId) ?? 0n
      if (posted !== owed || posted < 0n) report({ kind: 'debt_mismatch', message: `partner ${partnerId} owes ${owed} but its debt postings say ${posted}` })
    }
  }

  private async verifyAccount(account: AccountLedgerHead, report: (p: LedgerProblem) => void): Promise<number> {
    const id = account.id
    const posted = await postingsTotal(this.db, id)
    const { balance, held } = account
    if (posted !== balance) report({ kind: 'balance_mismatch', account_id: id, message: `balance ${balance} but postings sum to ${posted}` })
    if (balance < 0n || held < 0n || held > balance) report({ kind: 'below_zero', account_id: id, message: `balance ${balance}, held ${held}` })

    let prevSha = ''
    let expectedSeq = 1n
    let holds = 0n
    let running = 0n
    const postedRows: Array<{ order: bigint; credit: bigint; debit: bigint; running: bigint; id: string }> = []
    let count = 0
    for (let after = 0n; ; ) {
      const rows = await chainPage(this.db, id, after, verify_page_rows)
      for (const row of rows) {
        count++
        const seq = cents(row.seq)
        if (seq !== expectedSeq) report({ kind: 'chain_gap', account_id: id, tx_id: row.id, message: `seq ${seq} where ${expectedSeq} was expected` })
        expectedSeq = seq + 1n
        if (row.prev_sha !== prevSha || !rowHashHolds(row)) {
          report({ kind: 'chain_broken', account_id: id, tx_id: row.id, message: 'tx_sha does not match the row and its predecessor' })
        }
        prevSha = row.tx_sha
        if (row.status === 'Pending') holds += cents(row.hold_amount)
        // Money moved exactly for Successful and Reversed rows: a posted row shown as
        // Failed, or a Successful one that never posted, is an edited history.
        // A card authorization reversed before clearing never posted (card-journals.ts).
        const reversed = row.status === 'Reversed' && row.tx_type !== 'card'
        const settled = row.status === 'Successful' || reversed
        if ((row.posted_order !== null) !== settled) {
          report({ kind: 'status_mismatch', account_id: id, tx_id: row.id, message: `status ${row.status} but ${row.posted_order === null ? 'never posted' : 'posted'}` })
        }
        if (row.posted_order !== null) {
          postedRows.push({ order: cents(row.posted_order), credit: cents(row.credit), debit: cents(row.debit), running: cents(row.running_balance), id: row.id })
        }
      }
      if (rows.length < verify_page_rows) break
      after = cents(rows.at(-1)!.seq)
    }
    if (prevSha !== account.last_sha || expectedSeq - 1n !== account.last_seq) {
      report({ kind: 'chain_head_mismatch', account_id: id, message: 'the account does not point at its last transaction' })
    }
    if (holds !== held) report({ kind: 'hold_mismatch', account_id: id, message: `held ${held} but pending rows hold ${holds}` })
    postedRows.sort((a, b) => (a.order < b.order ? -1 : 1))
    for (const row of postedRows) {
      running += row.credit - row.debit
      if (row.running !== running) {
        report({ kind: 'running_balance_mismatch', account_id: id, tx_id: row.id, message: `running balance ${row.running}, expected ${running}` })
        running = row.running
      }
    }
    if (postedRows.length > 0 && running !== balance) {
      report({ kind: 'running_balance_mismatch', account_id: id, message: `last running balance ${running} but balance ${balance}` })
    }
    return count
  }
}
