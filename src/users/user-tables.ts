import type { Generated } from 'kysely'
import type { Timestamp, NullableTimestamp, Json } from '../db/column-types.ts'
import type { Address } from '../entities/entity-tables.ts'

// Kysely types of the table users own (src/schema.ts's Database extends UserTables). A
// user's address has the shape of its entity's.

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

export interface UserTables {
  users: UsersTable
}
