import type { Module } from '../module.ts'
import { CredentialStore } from './credential-store.ts'
import { cardNetworkCredentialsMigration } from './credential-migration.ts'
import type { AuthTables } from './credential-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'

/** What the module builds: its members of the bank's Services. */
export interface AuthServices {
  /** Credentials: issue, verify (cached), revoke. */
  credentials: CredentialStore
}

// Credentials: issue, verify, revoke. Its table came with 0001_foundation (operators).
export const authModule: Module<AuthServices, AuthTables> = {
  name: 'auth',
  reads: {
    partners: 'a credential\'s check reads its partner\'s suspension in the same query, which ' +
      'every request\'s authentication makes (then cached)',
  },
  migrations: { '0034_card_network_credentials': cardNetworkCredentialsMigration },
  services: (_s, { db, clock, config }) => ({
    credentials: new CredentialStore(db, clock, config.credentialCacheTtlMs),
  }),
  endpoints: (s) => [
    endpoint(contract.operators.credentialCreate, (r) => s.partners.issueCredential(r)),
    endpoint(contract.operators.credentialRevoke, (r) => s.credentials.revoke(r.credential_id)),
    endpoint(contract.operators.credentialList, async (r) => ({ credentials: await s.partners.listCredentials(r.partner_id) })),
    endpoint(contract.operators.credentialCreateCardNetwork,
      (r) => s.credentials.issueCardNetwork(r)),
    endpoint(contract.operators.credentialListCardNetworks,
      async () => ({ credentials: await s.credentials.listCardNetworks() })),
  ],
}
