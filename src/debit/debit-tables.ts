import type { ColumnType, Generated } from 'kysely'

// Kysely types of the tables debit orders own (src/schema.ts's Database extends this).
// See debit-migration.ts for what each table and column is for.

type Timestamp = ColumnType<Date, Date | string, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>
/** int8 columns: pg reads them as strings, PGlite as bigint; `cents()` makes them bigint. */
type Cents = ColumnType<bigint | string, bigint | string | number, bigint | string | number>
type NullableCents = ColumnType<bigint | string | null, bigint | string | number | null, bigint
  | string | number | null>
/** Business dates (SAST) as `YYYY-MM-DD` text columns, read and written as strings. */
type DateOnly = ColumnType<string, string, string>
type NullableDateOnly = ColumnType<string | null, string | null, string | null>
type Json<T> = ColumnType<T, string, string>

export type MandateStatus = 'pending_authentication' | 'active' | 'rejected' | 'cancelled'
export type DebitFrequency = 'once_off' | 'weekly' | 'monthly' | 'annually'
export type DebitAccountType = 'cheque' | 'savings'
export type DebitOrderStatus = 'scheduled' | 'processing' | 'successful' | 'failed' | 'disputed'
  | 'cancelled'
export type DebitCollectionStatus = 'processing' | 'successful' | 'failed' | 'disputed'

export interface DebitMandatesTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  /** Unique per entity. */
  mandate_reference: string
  status: MandateStatus
  account_holder_name: string
  account_number: string
  account_type: DebitAccountType
  branch_code: string
  max_amount: Cents
  frequency: DebitFrequency
  first_collection_date: NullableDateOnly
  debtor_email: string | null
  /** The one order a once_off mandate served (null for recurring mandates). */
  used_by_order: string | null
  /** Why the debtor's bank rejected it (status `rejected`). */
  rejection_reason: string | null
  /** When a mandate still pending should be asked about again (the rail decides later). */
  authentication_due_at: NullableTimestamp
  added_by: string
  created_at: Timestamp
  /** When the debtor's bank authenticated it (status `active`). */
  authenticated_at: NullableTimestamp
  /** When the debtor's bank decided (active or rejected). */
  decided_at: NullableTimestamp
  cancelled_at: NullableTimestamp
}

export interface DebitOrdersTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  /** The account credited: the entity's oldest account when the order was created. */
  account_id: string
  mandate_id: string
  mandate_reference: string
  client_tx_id: string
  amount: Cents
  account_holder_name: string
  account_number: string
  account_type: DebitAccountType
  branch_code: string
  reference: string
  frequency: DebitFrequency
  /** The date the partner asked for. */
  requested_collection_date: DateOnly
  /** The first collection date, moved forward to a business day. */
  collection_date: DateOnly
  /** The date of the collection the runs take next; null when nothing is left to collect. */
  next_collection_date: NullableDateOnly
  end_date: NullableDateOnly
  tracking_days: number
  notification_email: string | null
  metadata: Json<Record<string, string> | null> | null
  status: DebitOrderStatus
  /** Attempts at the current collection (insufficient funds is retried). */
  attempts: Generated<number>
  first_attempt_date: NullableDateOnly
  last_attempt_date: NullableDateOnly
  /** Successful collections so far. */
  collections_count: Generated<number>
  // The last collection's outcome, as the status operation shows it.
  processed_at: NullableTimestamp
  bank_charges: NullableCents
  net_amount: NullableCents
  credit_tx_id: string | null
  bank_reference: string | null
  failure_reason: string | null
  disputed_at: NullableTimestamp
  reversal_tx_id: string | null
  cancelled_at: NullableTimestamp
  cancel_reason: string | null
  added_by: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface DebitOrderHistoryTable {
  id: Generated<string>
  debit_order_id: string
  status: DebitOrderStatus
  description: string
  bank_reference: string | null
  /** The collection the entry belongs to (null for create and cancel). */
  collection_date: NullableDateOnly
  occurred_at: Timestamp
}

export interface DebitCollectionsTable {
  debit_order_id: string
  collection_date: DateOnly
  status: DebitCollectionStatus
  attempts: Generated<number>
  first_attempt_date: NullableDateOnly
  last_attempt_date: NullableDateOnly
  amount: Cents
  bank_charges: NullableCents
  net_amount: NullableCents
  credit_tx_id: string | null
  reversal_tx_id: string | null
  bank_reference: string | null
  failure_reason: string | null
  submitted_at: NullableTimestamp
  processed_at: NullableTimestamp
  disputed_at: NullableTimestamp
}

export interface DebitOrderKeysTable {
  partner_id: string
  client_tx_id: string
  debit_order_id: string
  created_at: Timestamp
}

export interface DebitTables {
  debit_mandates: DebitMandatesTable
  debit_orders: DebitOrdersTable
  debit_order_history: DebitOrderHistoryTable
  debit_collections: DebitCollectionsTable
  debit_order_keys: DebitOrderKeysTable
}
