import type { Module } from '../module.ts'
import type { NatsIdentityTables } from './nats-identity-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { cardNetworkNatsMigration, natsIdentityMigration, natsLimitsMigration } from './nats-identity-migration.ts'
import { partner_nats_limits_default } from './nats-claims.ts'
import { NatsLimits } from './nats-limits.ts'

/** What the module builds: its members of the bank's Services. */
export interface NatsIdentityServices {
  /** What each partner's NATS account may use of the servers (`ops.partner.limits`). */
  natsLimits: NatsLimits
}

// Partners' NATS identities: accounts, users, links, and their accounts' limits.
export const natsIdentityModule: Module<NatsIdentityServices, NatsIdentityTables> = {
  name: 'nats-identity',
  services: (_s, { db, clock, given }) => ({
    natsLimits: new NatsLimits(db, clock, given.natsIdentity),
  }),
  reads: {
    partners: 'whether a partner is suspended, where its NATS users are issued and its ' +
      'account\'s claims signed (the partner row is read under its lock)',
  },
  migrations: {
    '0018_nats_identity': natsIdentityMigration,
    '0035_card_network_nats': cardNetworkNatsMigration,
    '0048_nats_limits': natsLimitsMigration,
  },
  limits: {
    // Each partner's NATS account, unless an operator gave it its own (docs/operations.md).
    ...Object.fromEntries(Object.entries(partner_nats_limits_default).map(
      ([name, value]) => [`partner_nats_${name}`, value])),
  },
  endpoints: (s) => [
    endpoint(contract.natsIdentity.credsCreate, (r) => s.partners.issueNatsCreds(r)),
    endpoint(contract.natsIdentity.users, (r) => s.partners.listNatsUsers(r.partner_id)),
    endpoint(contract.natsIdentity.revoke, (r) => s.partners.revokeNatsUser(r.partner_id, r.user_id)),
    endpoint(contract.natsIdentity.suspend, (r) => s.partners.setSuspended(r.partner_id, true)),
    endpoint(contract.natsIdentity.unsuspend, (r) => s.partners.setSuspended(r.partner_id, false)),
  ],
}
