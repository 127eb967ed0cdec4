// The one closed list of event types. An event announces a change that has committed; the
// type names what happened to which kind of resource, `<resource>.<what happened>`, so
// that a subscriber can take a whole family (`debit_order.*`). Adding a type is adding a
// name to one of these lists; TypeScript then checks every `appendEvent` and `subscribe`.
// A contract file: the webhooks' contract names the partner's types from it, and the SDK
// and the CLI may read it, so it imports nothing (event-types.ts holds the matching).

/** Events partners receive as webhooks (Standard Webhooks `type`), in the interface's words. */
export const partnerEventTypes = [
  'bulk_payment.verified',
  'payment.success',
  'payment.failed',
  'payment.received',
  'account.status_changed',
  'account.hold_placed',
  'account.hold_released',
  'bulk_payment.completed',
  'bulk_payment.failed',
  'bulk_payment.cancelled',
  'debit_order.processing',
  'debit_order.successful',
  'debit_order.failed',
  'debit_order.disputed',
  'debit_order.cancelled',
  'mandate.active',
  'mandate.rejected',
  'kyc.submitted',
  'kyc.approved',
  'kyc.rejected',
  'kyb.submitted',
  'kyb.approved',
  'kyb.rejected',
  'card.request.created',
  'card.issued',
  'card.status_changed',
  'card.authorization.approved',
  'card.authorization.declined',
  'card.transaction.cleared',
  'card.transaction.reversed',
  'card.transaction.refunded',
  'account.statement_ready',
  'entity.screening_changed',
] as const

/** Events the bank announces to itself only; they never become webhooks. */
export const internalEventTypes = ['clearing.cycle_completed'] as const

export const eventTypes = [...partnerEventTypes, ...internalEventTypes] as const

export type PartnerEventType = (typeof partnerEventTypes)[number]
export type EventType = (typeof eventTypes)[number]

/** The part of a type before its dot: `bulk_payment`, `payment`, `debit_order`, … */
export type EventFamily = EventType extends `${infer Family}.${string}` ? Family : never

/** What a subscriber takes: one type, a whole family (`payment.*`), or every event (`*`). */
export type EventPattern = EventType | `${EventFamily}.*` | '*'
