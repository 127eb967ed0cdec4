import type { Generated } from 'kysely'
import type { Cents, GeneratedCents, Json, NullableTimestamp, Timestamp } from '../db/column-types.ts'
import type {
  AuthorizationStatus,
  CardFeatures,
  CardLimits,
  CardRequestStatus,
  CardStatus,
  DeclineReason,
} from './card-contract.ts'

// Kysely types of the tables cards own (src/schema.ts's Database extends this); what each
// table and column is for is in card-migration.ts.

export interface CardRequestsTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  account_id: string
  holder_user_id: string
  requested_by: string
  name: string
  type: number
  use_type: number
  features: Json<CardFeatures>
  limits: Json<CardLimits>
  auto_lock: NullableTimestamp
  status: CardRequestStatus
  decided_by: string | null
  decided_at: NullableTimestamp
  card_id: string | null
  created_at: Timestamp
}

export interface CardsTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  account_id: string
  holder_user_id: string
  request_id: string
  name: string
  type: number
  use_type: number
  features: Json<CardFeatures>
  limits: Json<CardLimits>
  auto_lock: NullableTimestamp
  status: CardStatus
  last_4: string
  pan_hash: string
  pan_sealed: string
  cvv_sealed: string
  /** The last day the card is valid, `YYYY-MM-DD` (the end of its expiry month). */
  expires_on: string
  pin_hash: string | null
  wrong_pins: number
  /** Raised by every change to the card or its spending (card-memory.ts). */
  version: GeneratedCents
  created_at: Timestamp
  updated_at: Timestamp
}

export interface CardAuthorizationsTable {
  id: string
  partner_id: string
  card_id: string
  account_id: string
  tx_id: string | null
  status: AuthorizationStatus
  decline_reason: DeclineReason | null
  decline_message: string | null
  amount: Cents
  held: Cents
  reversed: Cents
  cleared: Cents
  merchant_name: string
  mcc: string
  merchant_country: string
  channel: 'pos' | 'e_commerce' | 'atm'
  entry_mode: 'chip' | 'contactless' | 'magstripe' | 'manual'
  created_at: Timestamp
  updated_at: Timestamp
}

export interface CardDecisionSettingsTable {
  partner_id: string
  subject: string | null
  stand_in: 'approve' | 'decline'
  updated_at: Timestamp
}

export interface CardTables {
  card_decision_settings: CardDecisionSettingsTable
  card_requests: CardRequestsTable
  cards: CardsTable
  card_authorizations: CardAuthorizationsTable
}
