import type { Generated } from 'kysely'
import type { Timestamp, NullableTimestamp, Json } from '../db/column-types.ts'

// Kysely types of the table entities own (src/schema.ts's Database extends EntityTables).

export interface Address {
  address_line_1: string
  address_line_2?: string
  city?: string
  state?: string
  postcode?: string
  country?: string
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

export interface EntityTables {
  entities: EntitiesTable
}
