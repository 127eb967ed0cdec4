import type { ColumnType, Generated } from 'kysely'

// The one `Database` interface that types every query. Each capability owns its tables
// (see DESIGN.md); this file only describes them.

type Timestamp = ColumnType<Date, Date | string, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>
type Json<T> = ColumnType<T, string, string>

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
  name: string
  email: string
  root_entity_id: string
  created_at: Timestamp
}

export interface CredentialsTable {
  id: string
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
}

export interface Database {
  partners: PartnersTable
  credentials: CredentialsTable
  entities: EntitiesTable
  users: UsersTable
  accounts: AccountsTable
}
