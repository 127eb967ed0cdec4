import type { Module } from '../module.ts'
import { eventMigrations } from './event-migrations.ts'

// The outbox: events written with the change, handed to subscribers in order. Its table came
// with 0003_jobs_events (jobs).
export const eventsModule: Module = {
  name: 'events',
  migrations: {
    ...eventMigrations,
  },
}
