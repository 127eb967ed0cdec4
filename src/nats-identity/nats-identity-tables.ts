import type { ColumnType, Generated } from 'kysely'

// Kysely types of the tables the NATS identity capability owns (src/schema.ts's Database
// extends this). Every seed is sealed (AES-256-GCM under the bank's secrets key, see
// secrets/secret-box.ts) with its public key as the authenticated context.

type Timestamp = ColumnType<Date, Date | string, Date | string>

/** The one row set up by `bank nats init`: the operator and the bank's own accounts. */
export interface NatsAuthorityTable {
  id: number
  operator_public_key: string
  operator_jwt: string
  operator_seed_sealed: string
  signing_seed_sealed: string
  system_account: string
  system_seed_sealed: string
  bank_account: string
  bank_seed_sealed: string
  operators_account: string
  operators_seed_sealed: string
  /**
   * The card network's account (0035): made by `bank nats init`, also when run again on an
   * authority set up before it; null until then.
   */
  card_network_account: string | null
  card_network_seed_sealed: string | null
  created_at: Timestamp
}

/** One NATS account per partner, with the JWT last pushed to the servers. */
export interface NatsAccountsTable {
  partner_id: string
  public_key: string
  seed_sealed: string
  jwt: string
  /**
   * The `iat` of `jwt`: each new JWT of the account is issued strictly later, so the servers keep
   * the newest.
   */
  jwt_issued_at: ColumnType<bigint | string, bigint | string | number, bigint | string | number>
  created_at: Timestamp
}

/** Every NATS user the bank issued: a partner's, an operator's, the card network's, or its own. */
export interface NatsUsersTable {
  id: string
  created_seq: Generated<string>
  role: 'partner' | 'operator' | 'card_network' | 'bank'
  partner_id: string | null
  account: string
  public_key: string
  label: string
  created_at: Timestamp
  expires_at: Timestamp | null
  revoked_at: Timestamp | null
}

/**
 * What an operator gave a partner's account of the NATS servers (0048): each null column is the
 * bank's default (nats-claims.ts, partner_nats_limits_default); without a row, all are.
 */
export interface NatsLimitsTable {
  partner_id: string
  connections: number | null
  subscriptions: number | null
  payload: number | null
  /** PostgreSQL's bigint reads back as a string. */
  jetstream_disk: ColumnType<string | null, number | null, number | null>
  jetstream_memory: ColumnType<string | null, number | null, number | null>
  jetstream_streams: number | null
  jetstream_consumers: number | null
  updated_at: Timestamp
}

export interface NatsIdentityTables {
  nats_authority: NatsAuthorityTable
  nats_accounts: NatsAccountsTable
  nats_users: NatsUsersTable
  nats_limits: NatsLimitsTable
}
