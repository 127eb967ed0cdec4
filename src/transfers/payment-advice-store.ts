import type { Kysely } from 'kysely'
import { insertUnnest } from '../db/speed/arrays.ts'
import type { Database } from '../schema.ts'

// The SQL of `payment_advices`: the notice a payment's recipient asked for, one row per
// payment, written in the transaction that takes the payment.

/** A payment advice as the reserve step records it (sent_at stays null until it is sent). */
export interface PaymentAdviceRow {
  tx_id: string
  partner_id: string
  email: string
  /** The name to greet the recipient by; empty when the request named none. */
  name: string
  created_at: Date
}

/** Records advices in the caller's transaction: with the payment they belong to, or not at all. */
export async function insertPaymentAdvices(trx: Kysely<Database>,
    rows: PaymentAdviceRow[]): Promise<void> {
  await insertUnnest(trx, 'payment_advices', rows, [
    ['tx_id', 'uuid'], ['partner_id', 'uuid'], ['email', 'text'], ['name', 'text'],
      ['created_at', 'timestamptz'],
  ])
}

/** Which of these payments have an advice to send (the others asked for none). */
export async function advisedPayments(trx: Kysely<Database>,
    txIds: readonly string[]): Promise<string[]> {
  if (txIds.length === 0) return []
  const rows = await trx.selectFrom('payment_advices').select('tx_id').where('tx_id', 'in', txIds)
    .execute()
  return rows.map((row) => row.tx_id)
}

export async function paymentAdviceOf(db: Kysely<Database>, txId: string) {
  return db.selectFrom('payment_advices').selectAll().where('tx_id', '=', txId).executeTakeFirst()
}

export async function markPaymentAdviceSent(db: Kysely<Database>, txId: string,
    at: Date): Promise<void> {
  await db.updateTable('payment_advices').set({ sent_at: at }).where('tx_id', '=', txId).where(
    'sent_at', 'is', null).execute()
}
