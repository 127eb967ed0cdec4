import type { Module } from '../module.ts'
import { natsIdentityMigration } from './nats-identity-migration.ts'

// Partners' NATS identities: accounts, users, links.
export const natsIdentityModule: Module = {
  name: 'nats-identity',
  migrations: {
    '0018_nats_identity': natsIdentityMigration,
  },
}
