import type { Module } from '../module.ts'
import { PartnerService } from './partner-service.ts'
import type { PartnerTables } from './partner-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { foundationMigrations } from './foundation-migration.ts'

/** What the module builds: its members of the bank's Services. */
export interface PartnerServices {
  partners: PartnerService
}

// Operators' work on partners: create, suspend.
export const partnersModule: Module<PartnerServices, PartnerTables> = {
  name: 'partners',
  needs: ['auth', 'entities', 'accounts', 'webhooks'],
  services: (s, { db, clock, log, given }) => ({
    partners: new PartnerService(db, clock, s.credentials, s.entities, s.accounts,
      s.webhookSecrets, given.natsIdentity, log),
  }),
  migrations: {
    ...foundationMigrations,
  },
  endpoints: (s) => [
    endpoint(contract.operators.partnerCreate, (r) => s.partners.createPartner(r)),
    endpoint(contract.operators.partnerList, async () => ({ partners: await s.partners.listPartners() })),
  ],
}
