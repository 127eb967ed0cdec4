// The one closed list of event types. An event announces a change that has committed; the
// type names what happened to which kind of resource, `<resource>.<what happened>`, so
// that a subscriber can take a whole family (`debit_order.*`). Adding a type is adding a
// name to one of these lists; TypeScript then checks every `appendEvent` and `subscribe`.

/** Events partners receive as webhooks (Standard Webhooks `type`), in the interface's words. */
export const partnerEventTypes = [
  'bulk_payment.verified',
  'payment.success',
  'payment.failed',
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

const known = new Set<string>(eventTypes)
const partnerFacing = new Set<string>(partnerEventTypes)
const families = new Set<string>(eventTypes.map((type) => type.slice(0, type.indexOf('.'))))

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && known.has(value)
}

export function isPartnerEventType(value: unknown): value is PartnerEventType {
  return typeof value === 'string' && partnerFacing.has(value)
}

export function isEventPattern(value: unknown): value is EventPattern {
  if (typeof value !== 'string') return false
  if (value === '*' || known.has(value)) return true
  return value.endsWith('.*') && families.has(value.slice(0, -2))
}

/**
 * Whether an event of `type` goes to a subscriber of `pattern`. A family matches on the
 * whole name before the dot, so `payment.*` does not take `bulk_payment.completed`.
 */
export function eventMatches(pattern: EventPattern, type: string): boolean {
  if (pattern === '*') return true
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1))
  return type === pattern
}
