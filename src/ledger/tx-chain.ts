import { createHash } from 'node:crypto'
import { formatTimestamp } from '../contract/format.ts'
import { cents } from './cents.ts'

// `tx_sha` (RULINGS): a SHA-256 chain per account. Each transaction's hash covers its
// immutable fields and the previous transaction's hash, so editing or removing any
// history row breaks every later link. Status and running balance move after creation
// (Pending → Successful, a posting date) and are checked by the ledger verification
// against the postings instead.

export interface ChainFields {
  id: string
  account_id: string
  seq: bigint
  created_at: Date
  tx_type: string
  tx_payment_type: string
  amount: bigint
  fee: bigint
  credit: bigint
  debit: bigint
  ref: string
  own_ref: string
  recipient_name: string
  recipient_account: string
  recipient_branch: string
  parent_tx_id: string | null
  added_by: string
  user_id: string
}

export function canonicalForm(tx: ChainFields): string {
  return JSON.stringify([
    tx.id,
    tx.account_id,
    tx.seq.toString(),
    formatTimestamp(tx.created_at),
    tx.tx_type,
    tx.tx_payment_type,
    tx.amount.toString(),
    tx.fee.toString(),
    tx.credit.toString(),
    tx.debit.toString(),
    tx.ref,
    tx.own_ref,
    tx.recipient_name,
    tx.recipient_account,
    tx.recipient_branch,
    tx.parent_tx_id ?? '',
    tx.added_by,
    tx.user_id,
  ])
}

export function chainHash(prevSha: string, tx: ChainFields): string {
  return createHash('sha256').update(prevSha).update('\n').update(canonicalForm(tx)).digest('hex')
}

/** A stored row's own hash link: recomputed from its fields and the hash it names as previous. */
export function rowHashHolds(row: StoredChainRow): boolean {
  return (
    chainHash(row.prev_sha, {
      ...row,
      seq: cents(row.seq),
      amount: cents(row.amount),
      fee: cents(row.fee),
      credit: cents(row.credit),
      debit: cents(row.debit),
    }) === row.tx_sha
  )
}

/** A transactions row as read back: int8 columns arrive as string (pg) or bigint (PGlite). */
export type StoredChainRow = Omit<ChainFields, 'seq' | 'amount' | 'fee' | 'credit' | 'debit'> & {
  seq: bigint | string
  amount: bigint | string
  fee: bigint | string
  credit: bigint | string
  debit: bigint | string
  prev_sha: string
  tx_sha: string
}
