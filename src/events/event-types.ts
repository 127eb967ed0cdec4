import { eventTypes, partnerEventTypes, type EventPattern, type EventType, type PartnerEventType } from './event-contract.ts'

// Telling and matching event types. The closed list itself is a contract file
// (event-contract.ts), which the webhooks' contract reads; it is re-exported here so that
// the outbox and its subscribers keep one import.

export { eventTypes, internalEventTypes, partnerEventTypes, type EventFamily, type EventPattern, type EventType, type PartnerEventType } from './event-contract.ts'

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
