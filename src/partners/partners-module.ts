import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { foundationMigrations } from './foundation-migration.ts'

// Operators' work on partners: create, suspend.
export const partnersModule: Module = {
  name: 'partners',
  migrations: {
    ...foundationMigrations,
  },
  endpoints: (s) => [
    endpoint(contract.operators.partnerCreate, (r) => s.partners.createPartner(r)),
    endpoint(contract.operators.partnerList, async () => ({ partners: await s.partners.listPartners() })),
  ],
}
