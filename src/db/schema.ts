import type { ColumnType, Generated } from 'kysely'
import type { BulkTables } from '../bulk/bulk-tables.ts'
import type { DebitTables } from '../debit/debit-tables.ts'
import type { PartnerDebtTables } from '../ledger/partner-debt-tables.ts'
import type { KycTables } from '../kyc/kyc-migration.ts'
import type { NotifierTables } from '../notify/notify-migration.ts'
import type { DebitRailTables } from '../rails/debit-rail-tables.ts'
import type { SandboxTables } from '../sandbox/sandbox-tables.ts'
import type { NatsIdentityTables } from '../nats-identity/nats-identity-tables.ts'
import type { AuditTables } from '../audit/audit-tables.ts'
import type { WebhookTables } from '../webhooks/webhook-tables.ts'
import type { RateLimitTables } from '../limits/limits-tables.ts'

// The one `Database` interface that types every query. Each capability owns its tables
// (see DESIGN.md); this file only describes them.

type Timestamp = ColumnType<Date, Date | string, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>
type Json<T> = ColumnType<T, string, string>
/** int8 columns: pg reads them as strings, PGlite as bigint; `cents()` makes them bigint. */
export type Cents = ColumnType<bigint | string, bigint | string | number, bigint | string | number>
type GeneratedCents = ColumnType<bigint | string, bigint | string | number | undefined, bigint | string | number>

export interface Address {
  address_line_1: string
  address_line_2?: string
  city?: string
  state?: string
  postcode?: string
  country?: string
}

export interface PartnersTable {
  id: string
  created_seq: Generated<string>
  name: string
  email: string
  root_entity_id: string
  created_at: Timestamp
  /** Set while the partner is suspended: its tokens are refused and its NATS users cut off. */
  suspended_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
}

export interface CredentialsTable {
  id: string
  created_seq: Generated<string>
  partner_id: string | null
  role: 'partner' | 'operator'
  permissions: string
  token_hash: string
  label: string
  created_at: Timestamp
  expires_at: NullableTimestamp
  revoked_at: NullableTimestamp
}

export type ReviewStatus = 'pending' | 'approved' | 'rejected'

export interface EntitiesTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_type: 'business' | 'personal'
  is_root: Generated<boolean>
  name: string
  email: string
  country: string
  trading_name: Generated<string>
  registration_number: string | null
  tax_number: Generated<string>
  first_name: Generated<string>
  last_name: Generated<string>
  phone_number: Generated<string>
  gender: Generated<string>
  date_of_birth: NullableTimestamp
  id_number: string | null
  id_type: Generated<string>
  id_issue_date: NullableTimestamp
  id_issue_expiry_date: NullableTimestamp
  city: Generated<string>
  residency: Generated<string>
  title: Generated<string>
  permit_number: Generated<string>
  purpose: Generated<string>
  review_status: ReviewStatus
  review_reason: string | null
  reviewed_at: NullableTimestamp
  address: Json<Address | null> | null
  created_at: Timestamp
}

export type KycStatus = 'not_started' | 'pending' | 'approved' | 'rejected'

export interface UsersTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  is_entity_holder: Generated<boolean>
  first_name: string
  last_name: string
  email: string
  phone_number: string
  gender: string
  date_of_birth: Timestamp
  country: string
  city: string
  residency: string
  id_number: string
  id_type: string
  id_issue_date: Timestamp
  id_issue_expiry_date: NullableTimestamp
  title: string
  permit_number: string
  birth_country: string | null
  birth_city: string | null
  address: Json<Address | null> | null
  kyc_status: KycStatus
  kyc_submitted_at: NullableTimestamp
  kyc_reviewed_at: NullableTimestamp
  kyc_rejection_reason: string | null
  verified_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface AccountsTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  account_number: string
  country: string
  kind: 'pool' | 'standard'
  metadata: Json<Record<string, unknown>>
  created_at: Timestamp
  balance: GeneratedCents
  held: GeneratedCents
  last_seq: GeneratedCents
  last_sha: Generated<string>
  last_posted: GeneratedCents
}

export type TxType = 'transfer' | 'fee' | 'deposit' | 'bulk_payment' | 'debit_order' | 'reversal' | 'refund'
export type TxPaymentType = 'EFT' | 'RTC' | 'INTERNAL' | 'DEBIT_ORDER'
export type TxStatus = 'Invalid' | 'Pending' | 'Successful' | 'Failed' | 'Reversed'

export interface TransactionsTable {
  id: string
  partner_id: string
  account_id: string
  seq: Cents
  parent_tx_id: string | null
  created_at: Timestamp
  tx_type: TxType
  tx_payment_type: TxPaymentType
  status: TxStatus
  amount: Cents
  fee: Cents
  credit: Cents
  debit: Cents
  hold_amount: Cents
  running_balance: Cents
  posted_order: Cents | null
  ref: string
  own_ref: string
  recipient_name: string
  recipient_account: string
  recipient_branch: string
  user_id: string
  added_by: string
  status_reason: string | null
  status_at: NullableTimestamp
  prev_sha: string
  tx_sha: string
}

export interface PostingsTable {
  id: GeneratedCents
  journal_id: string
  tx_id: string | null
  account_id: string | null
  internal_account: string | null
  amount: Cents
  created_at: Timestamp
}

export interface TransferKeysTable {
  partner_id: string
  client_tx_id: string
  tx_id: string
  created_at: Timestamp
}

export type JobState = 'queued' | 'running' | 'done' | 'dead'

export interface JobsTable {
  id: string
  kind: string
  key: string
  payload: Json<Record<string, unknown>>
  state: JobState
  due_at: Timestamp
  attempts: Generated<number>
  attempts_max: number
  lease_ms: number
  /** Whose work it is, for kinds that share the runner's slots out (a partner); '' for the bank's own. */
  share: ColumnType<string, string | undefined, string>
  lease_owner: string | null
  lease_expires_at: NullableTimestamp
  last_error: string | null
  result: Json<Record<string, unknown> | null> | null
  created_at: Timestamp
  updated_at: Timestamp
  started_at: NullableTimestamp
  finished_at: NullableTimestamp
}

export interface EventsTable {
  id: string
  seq: Generated<string>
  type: string
  partner_id: string | null
  resource_id: string
  data: Json<Record<string, unknown>>
  occurred_at: Timestamp
  endpoint_url: string | null
}

/** The events not yet handed over (src/events): a row per event, deleted by the dispatch that hands it over. */
export interface EventsPendingTable {
  seq: ColumnType<bigint | string, bigint | string, never>
}

/** Owned by the simulated rail (src/rails/simulated-rail.ts): payments it will send back. */
export interface SimulatedRailReturnsTable {
  tx_id: string
  reason: string
  created_at: Timestamp
  collected_at: NullableTimestamp
}

export interface PaymentAdvicesTable {
  tx_id: string
  partner_id: string
  email: string
  name: string
  created_at: Timestamp
  sent_at: NullableTimestamp
}

export interface NotifierMessagesTable {
  id: string
  created_seq: Generated<string>
  key: string
  recipient: string
  subject: string
  body: string
  created_at: Timestamp
}

// Capabilities built later keep their table types beside their code and add them here.
export interface Database extends RateLimitTables, AuditTables, NatsIdentityTables, BulkTables, WebhookTables, SandboxTables, DebitTables, DebitRailTables, PartnerDebtTables, NotifierTables, KycTables {
  partners: PartnersTable
  credentials: CredentialsTable
  entities: EntitiesTable
  users: UsersTable
  accounts: AccountsTable
  transactions: TransactionsTable
  postings: PostingsTable
  transfer_keys: TransferKeysTable
  jobs: JobsTable
  events: EventsTable
  events_pending: EventsPendingTable
  simulated_rail_returns: SimulatedRailReturnsTable
  payment_advices: PaymentAdvicesTable
  notifier_messages: NotifierMessagesTable
}
