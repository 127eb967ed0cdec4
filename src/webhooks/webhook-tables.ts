import type { ColumnType, Generated } from 'kysely'

// Kysely types of the tables webhooks owns (src/schema.ts's Database extends this).

type Timestamp = ColumnType<Date, Date | string, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined,
  Date | string | null>

export type DeliveryState = 'pending' | 'delivered' | 'failed'

export interface WebhookEndpointsTable {
  partner_id: string
  url: string
  updated_at: Timestamp
}

export interface WebhookSecretsTable {
  id: string
  partner_id: string
  /** The secret sealed with the bank's key (secrets/secret-box.ts); never the plain text. */
  sealed: string
  created_at: Timestamp
  /** Null for the partner's current secret; after a rotation, when the old one stops signing. */
  retires_at: NullableTimestamp
}

export interface WebhookDeliveriesTable {
  event_id: string
  /** The event's place in the outbox: one resource's deliveries go out in this order. */
  seq: ColumnType<bigint | string, bigint | string, bigint | string>
  partner_id: string
  resource_id: string
  event_type: string
  /** The event's own endpoint (a batch's callback_url); null for the partner's endpoint. */
  endpoint_url: string | null
  /** The JSON body sent on every attempt: `{"type","timestamp","data"}`. */
  body: string
  state: DeliveryState
  attempts: Generated<number>
  /** Bumped whenever a job is scheduled for this delivery; older jobs then do nothing. */
  generation: Generated<number>
  first_attempt_at: NullableTimestamp
  last_attempt_at: NullableTimestamp
  next_attempt_at: NullableTimestamp
  last_status_code: ColumnType<number | null, number | null | undefined, number | null>
  last_error: ColumnType<string | null, string | null | undefined, string | null>
  delivered_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

/**
 * An endpoint whose latest attempts failed (webhook-breaker.ts); a success removes its row, so a
 * healthy endpoint has none.
 */
export interface WebhookEndpointHealthTable {
  partner_id: string
  url: string
  /** Failed attempts in a row. */
  failures: number
  /** The first failure of the run. */
  failing_since: Timestamp
  /** Backed off: no attempt before this. */
  backoff_until: NullableTimestamp
  /** Paused: no attempt until it is resumed. */
  paused_at: NullableTimestamp
  last_error: ColumnType<string | null, string | null | undefined, string | null>
  updated_at: Timestamp
}

export interface WebhookTables {
  webhook_endpoint_health: WebhookEndpointHealthTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_secrets: WebhookSecretsTable
  webhook_deliveries: WebhookDeliveriesTable
}
