import type { ColumnType, Generated } from 'kysely'

// Kysely types of the tables bulk payments owns (src/schema.ts's Database extends this).

type Timestamp = ColumnType<Date, Date | string, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>
type Cents = ColumnType<bigint | string, bigint | string | number, bigint | string | number>

export type BatchStatus = 'pending_otp' | 'processing' | 'completed' | 'failed' | 'cancelled'
export type PaymentStatus = 'pending' | 'processing' | 'success' | 'failed'

export interface BulkPaymentsTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  account_id: string
  bulk_payment_id: string
  description: string
  callback_url: string | null
  status: BatchStatus
  total_amount: Cents
  fee_total: Cents
  payment_count: number
  funding_tx_id: string
  /** HMAC-SHA256 of the one-time PIN under the bank's OTP key; never the PIN itself. */
  otp_hash: string
  otp_number: number
  /** The PIN in plain text, only ever written in sandbox mode (ops.sandbox.otp). */
  otp_sandbox: string | null
  otp_reference: string
  otp_expires_at: Timestamp
  otp_attempts: Generated<number>
  /** Why a batch ended `failed`: `otp_expired`, `otp_locked`, `otp_not_sent`. */
  failure_reason: string | null
  cancel_reason: string | null
  added_by: string
  created_at: Timestamp
  verified_at: NullableTimestamp
  completed_at: NullableTimestamp
  cancelled_at: NullableTimestamp
}

export interface BulkPaymentItemsTable {
  batch_id: string
  position: number
  payment_id: string
  amount: Cents
  fee: Cents
  real_time: boolean
  ref: string
  own_ref: string
  account_number: string
  branch_code: string
  name: string
  notification_email: string | null
  status: PaymentStatus
  tx_id: string | null
  error_message: string | null
  processed_at: NullableTimestamp
}

/** The lock row of one entity's verifies and initiates (pin-budget-migration.ts). */
export interface BulkPinBudgetsTable {
  entity_id: string
}

/** A wrong PIN an entity gave in the last hour. */
export interface BulkWrongPinsTable {
  entity_id: string
  batch_id: string
  given_at: Timestamp
}

export interface BulkTables {
  bulk_payments: BulkPaymentsTable
  bulk_payment_items: BulkPaymentItemsTable
  bulk_pin_budgets: BulkPinBudgetsTable
  bulk_wrong_pins: BulkWrongPinsTable
}
