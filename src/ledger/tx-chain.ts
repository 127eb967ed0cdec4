import { hash } from 'node:crypto'
import { cents } from './cents.ts'

// `tx_sha` (docs/guides/payments.md): a SHA-256 chain per account. Each transaction's hash
// covers its immutable fields and the previous transaction's hash, so editing or removing any
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

// The canonical form is the ledger's own, fixed for ever: a stored proof must not change
// when the wire format does. It is computed over the values exactly as the database keeps
// them: text as stored (an unpaired surrogate has no UTF-8 form and is stored as U+FFFD,
// so it is hashed as U+FFFD — the contract refuses such text anyway), the time to the
// millisecond in UTC with whole seconds written without a fraction (the form every
// stored proof so far was taken over).
export function canonicalForm(tx: ChainFields): string {
  // The text of JSON.stringify([...]) over these 18 strings, written out: a string is its
  // JSON text (q), and a number or a time, whose text holds nothing JSON escapes, is
  // quoted as it is. Half the cost of building the array and stringifying it.
  return (
    `[${q(tx.id)},${q(tx.account_id)},"${tx.seq}","${canonicalTime(tx.created_at)}",` +
    `${q(tx.tx_type)},${q(tx.tx_payment_type)},` +
    `"${tx.amount}","${tx.fee}","${tx.credit}","${tx.debit}",` +
    `${q(asStored(tx.ref))},${q(asStored(tx.own_ref))},` +
    `${q(asStored(tx.recipient_name))},${q(asStored(tx.recipient_account))},` +
    `${q(asStored(tx.recipient_branch))},` +
    `${q(tx.parent_tx_id ?? '')},${q(asStored(tx.added_by))},${q(asStored(tx.user_id))}]`
  )
}

/**
 * A string's JSON text: printable ASCII other than `"` and `\\` is its own JSON text, quoted
 * (JSON.stringify would return the same, at several times the cost of this test); anything
 * else goes through JSON.stringify.
 */
function q(text: string): string {
  return plainJson.test(text) ? `"${text}"` : JSON.stringify(text)
}

const plainJson = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

// The last time's text: a batch's rows share one creation time.
let lastTime = Number.NaN
let lastTimeText = ''

export function canonicalTime(at: Date): string {
  const time = at.getTime()
  if (time !== lastTime) {
    const iso = at.toISOString()
    lastTimeText = iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso
    lastTime = time
  }
  return lastTimeText
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** Text as the database stores it (UTF-8): an unpaired surrogate becomes U+FFFD. */
export function asStored(text: string): string {
  return text.isWellFormed() ? text : text.replace(loneSurrogate, '\ufffd')
}

export function chainHash(prevSha: string, tx: ChainFields): string {
  return hash('sha256', `${prevSha}\n${canonicalForm(tx)}`, 'hex')
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
