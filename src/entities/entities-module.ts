import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'

// Entities: the owners of users and accounts. Its table came with 0001_foundation (operators).
export const entitiesModule: Module = {
  name: 'entities',
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
