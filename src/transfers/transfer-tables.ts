import type { Timestamp, NullableTimestamp } from '../db/column-types.ts'

// Kysely types of the tables transfers own: the payment advices sent to recipients
// (src/schema.ts's Database extends TransferTables). The idempotency keys (transfer_keys) are
// the ledger writer's (ledger/ledger-tables.ts).

export interface PaymentAdvicesTable {
  tx_id: string
  partner_id: string
  email: string
  name: string
  created_at: Timestamp
  sent_at: NullableTimestamp
}

export interface TransferTables {
  payment_advices: PaymentAdvicesTable
}
