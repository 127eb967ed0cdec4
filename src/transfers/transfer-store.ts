import { sql, type Kysely } from 'kysely'
import { unnestRows } from '../db/bulk.ts'
import type { Database } from '../db/schema.ts'

// The SQL of transfers' own table, `transfer_keys`: one row per partner and clientTxId,
// the database's guard against paying the same request twice (on any instance).

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
export async function claimTransferKeys(trx: Kysely<Database>, keys: TransferKey[], now: Date, cutoff: Date): Promise<Set<string>> {
  if (keys.length === 0) return new Set()
  const sorted = [...keys].sort((a, b) =>
    a.partner_id === b.partner_id ? a.client_tx_id.localeCompare(b.client_tx_id) : a.partner_id.localeCompare(b.partner_id),
  )
  const { rows } = await sql<{ tx_id: string }>`
    insert into transfer_keys (partner_id, client_tx_id, tx_id, created_at)
    select v.partner_id, v.client_tx_id, v.tx_id, ${now}::timestamptz
    from ${unnestRows(sorted, [['partner_id', 'uuid'], ['client_tx_id', 'uuid'], ['tx_id', 'uuid']])}
    on conflict (partner_id, client_tx_id) do update set tx_id = excluded.tx_id, created_at = excluded.created_at
      where transfer_keys.created_at < ${cutoff}
    returning tx_id`.execute(trx)
  return new Set(rows.map((r) => r.tx_id))
}

/** Frees the keys of requests that moved no money, so they may be used again. */
export async function releaseTransferKeys(trx: Kysely<Database>, txIds: string[]): Promise<void> {
  if (txIds.length === 0) return
  await trx.deleteFrom('transfer_keys').where('tx_id', 'in', txIds).execute()
}

/** The keys with these clientTxIds (of any partner; callers match the partner). */
export async function transferKeysOf(trx: Kysely<Database>, clientTxIds: string[]): Promise<TransferKey[]> {
  if (clientTxIds.length === 0) return []
  return trx
    .selectFrom('transfer_keys')
    .select(['partner_id', 'client_tx_id', 'tx_id'])
    .where('client_tx_id', 'in', clientTxIds)
    .execute()
}
