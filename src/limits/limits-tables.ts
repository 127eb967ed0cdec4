import type { ColumnType } from 'kysely'

// Kysely types of the tables the limits capability owns (src/schema.ts's Database
// extends this; limits-migration.ts makes them).

type Timestamp = ColumnType<Date, Date | string, Date | string>

/** The limits an operator gave a partner; without a row, the bank's defaults apply. */
export interface RateLimitsTable {
  partner_id: string
  requests_per_second: number
  burst: number
  updated_at: Timestamp
}

/** A credential's shared token bucket, leased from in chunks by every instance. */
export interface RateBucketsTable {
  credential_id: string
  requests_per_second: number
  burst: number
  tokens: number
  leased: number
  /** Milliseconds since the epoch; PostgreSQL's bigint reads back as a string. */
  refilled_ms: ColumnType<string, number | string, number | string>
}

export interface RateLimitTables {
  rate_limits: RateLimitsTable
  rate_buckets: RateBucketsTable
}
