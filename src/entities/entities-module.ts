import type { Module } from '../module.ts'
import { EntityService } from './entity-service.ts'
import type { EntityTables } from './entity-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'

/** What the module builds: its members of the bank's Services. */
export interface EntityServices {
  entities: EntityService
}

// Entities: the owners of users and accounts. Its table came with 0001_foundation (operators).
export const entitiesModule: Module<EntityServices, EntityTables> = {
  name: 'entities',
  needs: ['users', 'screening'],
  services: (s, { db, clock }) => ({
    entities: new EntityService(db, clock, s.users, s.screeningReviews),
  }),
  endpoints: (s) => [
    endpoint(contract.entities.create, (r, c) => s.entities.create(partnerOf(c), r)),
    endpoint(contract.entities.info, (r, c) => s.entities.info(partnerOf(c), r.entity_id)),
    endpoint(contract.entities.list, async (_r, c) => ({ entities: await s.entities.list(partnerOf(c)) })),
    endpoint(contract.entities.getAddress, (r, c) => s.entities.address(partnerOf(c), r.entity_id)),
    endpoint(contract.entities.updateAddress, async ({ entity_id, ...address }, c) => {
      await s.entities.updateAddress(partnerOf(c), entity_id, address)
      return {}
    }),
    endpoint(contract.operators.entityList, async (r) => ({ entities: await s.entities.listForOperator(r.partner_id) })),
  ],
}
