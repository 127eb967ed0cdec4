import type { Timestamp, NullableTimestamp } from '../db/column-types.ts'

// Kysely types of the tables transfers own: the partner's idempotency keys and the payment
// advices sent to recipients (src/schema.ts's Database extends TransferTables).

export interface TransferKeysTable {
  partner_id: string
  client_tx_id: string
  tx_id: string
  created_at: Timestamp
}

export interface PaymentAdvicesTable {
  tx_id: string
  partner_id: string
  email: string
  name: string
  created_at: Timestamp
  sent_at: NullableTimestamp
}

export interface TransferTables {
  transfer_keys: TransferKeysTable
  payment_advices: PaymentAdvicesTable
}
