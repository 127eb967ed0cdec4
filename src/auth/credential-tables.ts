import type { Generated } from 'kysely'
import type { Timestamp, NullableTimestamp } from '../db/column-types.ts'

// Kysely types of the table credentials live in (credential-store.ts; src/schema.ts's
// Database extends AuthTables).

export interface CredentialsTable {
  id: string
  created_seq: Generated<string>
  partner_id: string | null
  /** A partner's, an operator's, or a card network's (credential-store.ts, CredentialRole). */
  role: 'partner' | 'operator' | 'card_network'
  permissions: string
  token_hash: string
  label: string
  created_at: Timestamp
  expires_at: NullableTimestamp
  revoked_at: NullableTimestamp
}

export interface AuthTables {
  credentials: CredentialsTable
}
