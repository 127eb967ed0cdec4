import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { foundationMigrations } from './foundation-migration.ts'

// Operators' work on partners: create, suspend.
export const operatorsModule: Module = {
  name: 'operators',
  migrations: {
    ...foundationMigrations,
  },
  endpoints: (s) => [
    endpoint(contract.operators.partnerCreate, (r) => s.operators.createPartner(r)),
    endpoint(contract.operators.partnerList, async () => ({ partners: await s.operators.listPartners() })),
  ],
}
