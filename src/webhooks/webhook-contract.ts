import { z } from 'zod'
import { pageLimit, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { partnerEventTypes } from '../events/event-contract.ts'
import { pageCursor } from '../contract/cursor.ts'

// A partner's webhooks: where they go, the signing secret, and what became of each event.
// Reading needs `read`; changing the endpoint, rotating the secret and asking for a
// redelivery need `write` (they change how the bank talks to the partner, as an address
// update does).

export const delivery_states = ['pending', 'delivered', 'failed'] as const
export const deliveries_page_limit_max = 200
export const deliveries_page_limit_default = 50
export const webhook_url_length_max = 2048

export const deliveryView = z.object({
  event_id: z.string(),
  event_type: z.string(),
  resource_id: z.string(),
  state: z.enum(delivery_states),
  attempts: z.number(),
  last_status_code: z.number().nullable(),
  last_error: z.string().nullable(),
  created_at: timestamp,
  last_attempt_at: timestamp.nullable(),
  next_attempt_at: timestamp.nullable(),
  delivered_at: timestamp.nullable(),
})

export type DeliveryView = z.output<typeof deliveryView>

/** A delivery as an operator sees it: whose it is, beside what the partner sees. */
export const operatorDeliveryView = deliveryView.extend({ partner_id: z.string() })
const deliveryState = z.enum(delivery_states, {
  error: `must be one of ${delivery_states.join(', ')}`,
})
const eventType = z.enum(partnerEventTypes, {
  error: `must be one of ${partnerEventTypes.join(', ')}`,
})
const operatorDeliveries = z.object({
  deliveries: z.array(operatorDeliveryView),
  next_cursor: z.string().optional(),
})
export type OperatorDeliveryView = z.output<typeof operatorDeliveryView>

const endpointReply = z.object({ url: z.string().nullable() })

/** An endpoint's circuit breaker: failing (below the threshold), backed off, or paused. */
export const endpoint_states = ['failing', 'backed_off', 'paused'] as const
export type EndpointState = (typeof endpoint_states)[number]

export const endpoints_page_limit_max = 200
export const endpoints_page_limit_default = 50

/** An endpoint whose latest attempts failed (the per-endpoint circuit breaker). */
export const endpointHealthView = z.object({
  partner_id: z.string(),
  url: z.string(),
  state: z.enum(endpoint_states),
  /** Failed attempts in a row. */
  failures: z.number(),
  failing_since: timestamp,
  backoff_until: timestamp.nullable(),
  paused_at: timestamp.nullable(),
  last_error: z.string().nullable(),
})
export type EndpointHealthView = z.output<typeof endpointHealthView>

export const webhookOperations = {
  setEndpoint: operation({
    name: 'webhook_set_endpoint',
    subject: 'svc.webhook.<partner_id>.set_endpoint',
    permission: 'write',
    summary:
      "Set the partner's webhook endpoint (https:// to a public address; the sandbox also allows http:// and loopback). An empty url clears it.",
    request: z.strictObject({
      url: z
        .string({ error: 'must be a string' })
        .trim()
        .max(webhook_url_length_max,
          { error: `must be at most ${webhook_url_length_max} characters` }),
    }),
    response: endpointReply,
  }),
  getEndpoint: operation({
    name: 'webhook_get_endpoint',
    subject: 'svc.webhook.<partner_id>.get_endpoint',
    permission: 'read',
    summary: "The partner's webhook endpoint (null when none is set).",
    request: z.strictObject({}),
    response: endpointReply,
  }),
  rotateSecret: operation({
    name: 'webhook_rotate_secret',
    subject: 'svc.webhook.<partner_id>.rotate_secret',
    permission: 'write',
    summary:
      'A new signing secret, shown once. The previous one keeps signing beside it for 24 hours ' +
        '(two v1 signatures), then stops.',
    request: z.strictObject({}),
    response: z.object(
      { webhook_secret: z.string(), previous_secret_retires_at: timestamp.nullable() }),
  }),
  listDeliveries: operation({
    name: 'webhook_list_deliveries',
    subject: 'svc.webhook.<partner_id>.list_deliveries',
    permission: 'read',
    summary: `The partner's webhook deliveries, newest first (limit default ${deliveries_page_limit_default}, max ${deliveries_page_limit_max}; next_cursor while more follow).`,
    request: z.strictObject({
      event_type: z.enum(partnerEventTypes,
        { error: `must be one of ${partnerEventTypes.join(', ')}` }).optional(),
      limit: pageLimit(deliveries_page_limit_max).optional(),
      cursor: pageCursor().optional(),
    }),
    response: z.object({ deliveries: z.array(deliveryView), next_cursor: z.string().optional() }),
  }),
  redeliver: operation({
    name: 'webhook_redeliver',
    subject: 'svc.webhook.<partner_id>.redeliver',
    permission: 'write',
    summary: "Send one of the partner's events again (delivered or failed ones; a pending one is already on its way).",
    request: z.strictObject({ event_id: uuid() }),
    response: z.object({ delivery: deliveryView }),
  }),
  // The operators' view across partners (issue 32): tracing a failed delivery the metrics
  // count, and sending it again on the partner's behalf (audited as the operator's action).
  operatorDeliveries: operation({
    name: 'ops_webhook_deliveries',
    sdk: 'webhooks.deliveries',
    subject: 'ops.webhook.deliveries',
    permission: 'operator',
    summary: `Webhook deliveries across partners, newest first, optionally of one partner, state or event type (limit default ${deliveries_page_limit_default}, max ${deliveries_page_limit_max}; next_cursor while more follow).`,
    request: z.strictObject({
      partner_id: uuid().optional(),
      state: deliveryState.optional(),
      event_type: eventType.optional(),
      limit: pageLimit(deliveries_page_limit_max).optional(),
      cursor: pageCursor().optional(),
    }),
    response: operatorDeliveries,
  }),
  operatorRedeliver: operation({
    name: 'ops_webhook_redeliver',
    sdk: 'webhooks.redeliver',
    cli: { positionals: ['event_id'] },
    subject: 'ops.webhook.redeliver',
    permission: 'operator',
    summary: "Send a partner's delivered or failed event again on the partner's behalf (a pending one is already on its way); audited as the operator's action.",
    request: z.strictObject({ event_id: uuid() }),
    response: z.object({ delivery: operatorDeliveryView }),
  }),
  // The per-endpoint circuit breaker (issue 45): endpoints that keep failing are backed off,
  // then paused; operators see them here and resume them.
  operatorEndpoints: operation({
    name: 'ops_webhook_endpoints',
    sdk: 'webhooks.endpoints',
    subject: 'ops.webhook.endpoints',
    permission: 'operator',
    summary: `Webhook endpoints whose latest attempts failed (failing, backed_off or paused), longest failing first, optionally of one partner or state (limit default ${endpoints_page_limit_default}, max ${endpoints_page_limit_max}).`,
    request: z.strictObject({
      partner_id: uuid().optional(),
      state: z.enum(endpoint_states,
        { error: `must be one of ${endpoint_states.join(', ')}` }).optional(),
      limit: pageLimit(endpoints_page_limit_max).optional(),
    }),
    response: z.object({ endpoints: z.array(endpointHealthView) }),
  }),
  operatorResumeEndpoint: operation({
    name: 'ops_webhook_resume_endpoint',
    sdk: 'webhooks.resumeEndpoint',
    cli: { positionals: ['partner_id'] },
    subject: 'ops.webhook.resume_endpoint',
    permission: 'operator',
    summary: "Resume a partner's backed-off or paused webhook endpoints (only `url`'s, when given): their waiting deliveries go out at once, in order, with a fresh retry window; audited as the operator's action.",
    request: z.strictObject({
      partner_id: uuid(),
      url: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' })
        .max(webhook_url_length_max,
          { error: `must be at most ${webhook_url_length_max} characters` }).optional(),
    }),
    response: z.object({ resumed: z.array(z.string()), lanes: z.number() }),
  }),
}
