import type { Module } from '../module.ts'
import type { NatsIdentityTables } from './nats-identity-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { cardNetworkNatsMigration, natsIdentityMigration } from './nats-identity-migration.ts'

// Partners' NATS identities: accounts, users, links.
export const natsIdentityModule: Module<object, NatsIdentityTables> = {
  name: 'nats-identity',
  reads: {
    partners: 'whether a partner is suspended, where its NATS users are issued and its ' +
      'account\'s claims signed (the partner row is read under its lock)',
  },
  migrations: {
    '0018_nats_identity': natsIdentityMigration,
    '0035_card_network_nats': cardNetworkNatsMigration,
  },
  endpoints: (s) => [
    endpoint(contract.natsIdentity.credsCreate, (r) => s.partners.issueNatsCreds(r)),
    endpoint(contract.natsIdentity.users, (r) => s.partners.listNatsUsers(r.partner_id)),
    endpoint(contract.natsIdentity.revoke, (r) => s.partners.revokeNatsUser(r.partner_id, r.user_id)),
    endpoint(contract.natsIdentity.suspend, (r) => s.partners.setSuspended(r.partner_id, true)),
    endpoint(contract.natsIdentity.unsuspend, (r) => s.partners.setSuspended(r.partner_id, false)),
  ],
}
