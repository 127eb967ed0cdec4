// The outbox's public surface: append events in a transaction, dispatch them to subscribers.
export { appendEvent, appendEvents, type NewEvent } from './event-outbox.ts'
export {
  EventDispatcher,
  EventSubscriberError,
  events_dispatch_batch_max_default,
  type EventDispatcherOptions,
  type EventHandler,
} from './event-dispatcher.ts'
export type { OutboxEvent } from './event-store.ts'
export {
  eventTypes,
  internalEventTypes,
  isEventType,
  isPartnerEventType,
  partnerEventTypes,
  type EventFamily,
  type EventPattern,
  type EventType,
  type PartnerEventType,
} from './event-types.ts'
