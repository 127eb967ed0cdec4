import { sql, type Kysely, type Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'
import { creditRefusal } from './account-status.ts'
import type { JournalKind } from './journal-kind.ts'
import type { LedgerExecutor, TxPaymentType } from './ledger-tables.ts'
import { newRowId } from './row-id.ts'
import { unclaimed_funds } from './unclaimed-funds.ts'

// Unclaimed funds as operators find and pay them (unclaimed-funds.ts says how money gets
// there): what the `unclaimed_funds` ledger account holds, by the payment each amount came
// back for, and its payment to another account of the customer (account-status/
// unclaimed-funds-service.ts decides who may and to which account).

/** Finds what the unclaimed funds hold by the payment they came back for. */
export const unclaimedFundsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create index postings_unclaimed on postings (tx_id)
        where internal_account = 'unclaimed_funds'
    `)
  },
}

/** Money the bank keeps for a closed account: what came back for one of its payments. */
export interface UnclaimedRow {
  /** The payment it came back for (a payout returned, a closing EFT that failed). */
  tx_id: string
  account_id: string
  partner_id: string
  entity_id: string
  tx_type: string
  tx_payment_type: string
  ref: string
  recipient_name: string
  /** What is still unclaimed, in cents. */
  amount: bigint
  /** When it came back. */
  since: Date
}

/** Unclaimed funds not yet paid out: of one account, one payment, or all, oldest first. */
export async function unclaimedRows(db: LedgerExecutor,
    of: { accountId?: string | undefined; txId?: string | undefined }): Promise<UnclaimedRow[]> {
  const byAccount = of.accountId === undefined ? sql`true` : sql`t.account_id = ${of.accountId}`
  const byTx = of.txId === undefined ? sql`true` : sql`p.tx_id = ${of.txId}`
  const { rows } = await sql<Omit<UnclaimedRow, 'amount'> & { amount: string }>`
    select p.tx_id, t.account_id, t.partner_id, a.entity_id, t.tx_type, t.tx_payment_type,
      t.ref, t.recipient_name, sum(p.amount)::text as amount, min(p.created_at) as since
    from postings p
    join transactions t on t.id = p.tx_id
    join accounts a on a.id = t.account_id
    where p.internal_account = 'unclaimed_funds' and ${byAccount} and ${byTx}
    group by p.tx_id, t.account_id, t.partner_id, a.entity_id, t.tx_type, t.tx_payment_type,
      t.ref, t.recipient_name
    having sum(p.amount) > 0
    order by min(p.created_at), p.tx_id
  `.execute(db)
  return rows.map((r) => ({ ...r, amount: BigInt(r.amount), since: new Date(r.since) }))
}

/** An operator's payment of unclaimed funds to another account of the customer. */
export interface UnclaimedPayout {
  /** The payment the money came back for, and its (closed) account. */
  source: UnclaimedRow
  /** What is unclaimed now, read under the closed account's lock. */
  amount: bigint
  payeeAccountId: string
  reason: string
  addedBy: string
}

/**
 * Pays unclaimed funds to another account of the customer: unclaimed_funds → the payee, with
 * a `reversal` row there whose parent is the payment the money came back for. Answers its id.
 */
export const unclaimedPayout: JournalKind<UnclaimedPayout, string> = {
  name: 'unclaimed.pay',
  accountsOf: (u) => [u.source.account_id, u.payeeAccountId],
  record(journal, u) {
    const refused = creditRefusal(journal, u.payeeAccountId, 'pay_to_account_id')
    if (refused) throw refused
    const rowId = newRowId()
    journal.post([
      { internal: unclaimed_funds, amount: -u.amount, tx_id: u.source.tx_id },
      { account: u.payeeAccountId, amount: u.amount, tx_id: rowId },
    ])
    journal.append({
      id: rowId,
      account_id: u.payeeAccountId,
      parent_tx_id: u.source.tx_id,
      tx_type: 'reversal',
      tx_payment_type: u.source.tx_payment_type as TxPaymentType,
      status: 'Successful',
      amount: u.amount,
      credit: u.amount,
      debit: 0n,
      ref: u.source.ref,
      recipient_name: u.source.recipient_name,
      added_by: u.addedBy,
      posted: true,
      status_reason: `came back after its account closed; paid from unclaimed funds: ${u.reason}`,
    })
    return rowId
  },
}
