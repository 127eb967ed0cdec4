import type { Module } from '../module.ts'
import { EventDispatcher } from './index.ts'
import type { EventTables } from './event-tables.ts'
import { eventMigrations } from './event-migrations.ts'

/** What the module builds: its members of the bank's Services. */
export interface EventServices {
  /** The outbox's subscribers, handed each event in order by the job runner. */
  events: EventDispatcher
}

// The outbox: events written with the change, handed to subscribers in order. Its table came
// with 0003_jobs_events (jobs).
export const eventsModule: Module<EventServices, EventTables> = {
  name: 'events',
  services: (_s, { db }) => ({ events: new EventDispatcher(db) }),
  migrations: {
    ...eventMigrations,
  },
}
