import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'

// Users of entities, with their KYC state. Its table came with 0001_foundation (operators).
export const usersModule: Module = {
  name: 'users',
  endpoints: (s) => [
    endpoint(contract.users.create, (r, c) => s.users.create(partnerOf(c), r)),
    endpoint(contract.users.update, (r, c) => s.users.update(partnerOf(c), r)),
    endpoint(contract.users.get, async (r, c) => ({ user: await s.users.get(partnerOf(c), r.user_id) })),
    endpoint(contract.users.getBirthDetails, (r, c) => s.users.birthDetails(partnerOf(c), r.user_id)),
    endpoint(contract.users.list, async (r, c) => ({ users: await s.users.list(partnerOf(c), r.entity_id) })),
  ],
}
