import { sql, type RawBuilder } from 'kysely'
import { arrayParameter, unnestRows } from '../db/speed/arrays.ts'
import { prepared } from '../db/speed/prepared.ts'
import type { LedgerExecutor } from './ledger-tables.ts'

// The SQL of `transfer_keys`, one row per partner and clientTxId: the database's guard
// against paying the same request twice (on any instance). The ledger writer claims them
// in the batch that moves the money (ledger-writer.ts).

export interface TransferKey {
  partner_id: string
  client_tx_id: string
  tx_id: string
}

/**
 * Claims the keys in one statement, in a fixed order (against deadlocks between
 * concurrent batches); returns the tx ids whose key was new. A key older than `cutoff`
 * no longer counts and is taken over; a live one is left alone (a duplicate).
 */
export async function claimTransferKeys(trx: LedgerExecutor, keys: TransferKey[], now: Date,
    cutoff: Date): Promise<Set<string>> {
  if (keys.length === 0) return new Set()
  const { rows } = await prepared(claimStatement(keys, now, cutoff)).execute(trx)
  return new Set(rows.map((r) => r.tx_id))
}

/** The statement that claims the keys (see claimTransferKeys), returning each new key's tx id. */
function claimStatement(keys: TransferKey[], now: Date, cutoff: Date): RawBuilder<{
    tx_id: string }> {
  return sql<{ tx_id: string }>`
    ${insertKeysStatement(keys, now)}
    on conflict (partner_id, client_tx_id) do update set tx_id = excluded.tx_id, created_at = excluded.created_at
      where transfer_keys.created_at < ${cutoff}::timestamptz
    returning tx_id`
}

/**
 * The statement that inserts keys this batch expects to be new, as a plain insert: cheaper
 * for PostgreSQL than claimStatement's `on conflict`, which probes every key before
 * inserting it. Any key already there (live, expired, or being claimed by a transaction not
 * yet committed, which it waits for) fails the whole statement with a unique violation
 * (isKeyTaken), after which the batch is written again with claimStatement, which tells a
 * live key from an expired one.
 */
export function insertKeysStatement(keys: TransferKey[], now: Date): RawBuilder<unknown> {
  // In a fixed order, against deadlocks between concurrent batches.
  const sorted = [...keys].sort((a, b) =>
    a.partner_id === b.partner_id ? a.client_tx_id.localeCompare(b.client_tx_id)
      : a.partner_id.localeCompare(b.partner_id),
  )
  return sql`
    insert into transfer_keys (partner_id, client_tx_id, tx_id, created_at)
    select v.partner_id, v.client_tx_id, v.tx_id, ${now}::timestamptz
    from ${unnestRows(sorted, [['partner_id', 'uuid'], ['client_tx_id', 'uuid'], ['tx_id', 'uuid']])}`
}

/** Whether a statement failed because a key it inserted was already there. */
export function isKeyTaken(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null
  return e?.code === '23505' && e.constraint === 'transfer_keys_pkey'
}

/** The statement that finds which of these keys are live (used at or after `cutoff`). */
export function liveKeysStatement(keys: Array<Omit<TransferKey, 'tx_id'>>,
    cutoff: Date): RawBuilder<{ tx_id: string }> {
  return sql<{ tx_id: string }>`
    select k.tx_id from transfer_keys as k
    join ${unnestRows(keys, [['partner_id', 'uuid'], ['client_tx_id', 'uuid']])} using (partner_id, client_tx_id)
    where k.created_at >= ${cutoff}::timestamptz`
}

/** Frees the keys of requests that moved no money, so they may be used again. */
export async function releaseTransferKeys(trx: LedgerExecutor, txIds: string[]): Promise<void> {
  if (txIds.length === 0) return
  await sql`delete from transfer_keys where tx_id = any(${arrayParameter('uuid', txIds)}::uuid[])`.execute(trx)
}

/**
 * What the transaction a key names recorded of its request: the fields a repeat is compared
 * with, to tell a retry of it (a duplicate) from another request under the same key.
 */
export interface KeyOriginal {
  account_id: string
  amount: bigint
  tx_payment_type: string
  ref: string
  own_ref: string
  recipient_name: string
  recipient_account: string
  recipient_branch: string
}

/** A live key with what its transaction recorded (undefined should that row be gone). */
export interface KeyWithOriginal extends TransferKey {
  original: KeyOriginal | undefined
}

/**
 * The live keys (used at or after `cutoff`) with these clientTxIds, of any partner (callers
 * match the partner), each with what its transaction recorded. An expired key's row may still
 * be there, and counts for nothing.
 */
export async function transferKeysOf(trx: LedgerExecutor, clientTxIds: string[],
    cutoff: Date): Promise<KeyWithOriginal[]> {
  if (clientTxIds.length === 0) return []
  const rows = await trx
    .selectFrom('transfer_keys as k')
    .leftJoin('transactions as t', 't.id', 'k.tx_id')
    .select(['k.partner_id', 'k.client_tx_id', 'k.tx_id', 't.account_id', 't.amount',
      't.tx_payment_type', 't.ref', 't.own_ref', 't.recipient_name', 't.recipient_account',
      't.recipient_branch'])
    .where('k.client_tx_id', 'in', clientTxIds)
    .where('k.created_at', '>=', cutoff)
    .execute()
  return rows.map(({ partner_id, client_tx_id, tx_id, account_id, amount, ...rest }) => ({
    partner_id, client_tx_id, tx_id,
    original: account_id === null || amount === null ? undefined : {
      account_id, amount: BigInt(amount), tx_payment_type: rest.tx_payment_type ?? '',
      ref: rest.ref ?? '', own_ref: rest.own_ref ?? '', recipient_name: rest.recipient_name ?? '',
      recipient_account: rest.recipient_account ?? '',
      recipient_branch: rest.recipient_branch ?? '',
    },
  }))
}
