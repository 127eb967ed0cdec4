import type { Module } from '../module.ts'
import { UserService } from './user-service.ts'
import type { UserTables } from './user-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'

/** What the module builds: its members of the bank's Services. */
export interface UserServices {
  users: UserService
}

// Users of entities, with their KYC state. Its table came with 0001_foundation (operators).
export const usersModule: Module<UserServices, UserTables> = {
  name: 'users',
  needs: ['screening'],
  services: (s, { db, clock }) => ({ users: new UserService(db, clock, s.screeningReviews) }),
  endpoints: (s) => [
    endpoint(contract.users.create, (r, c) => s.users.create(partnerOf(c), r)),
    endpoint(contract.users.update, (r, c) => s.users.update(partnerOf(c), r)),
    endpoint(contract.users.get, async (r, c) => ({
      user: await s.users.get(partnerOf(c), r.user_id),
      screening_status: await s.users.screeningStatus(partnerOf(c), r.user_id),
    })),
    endpoint(contract.users.getBirthDetails, (r, c) => s.users.birthDetails(partnerOf(c), r.user_id)),
    endpoint(contract.users.list, async (r, c) => ({ users: await s.users.list(partnerOf(c), r.entity_id) })),
  ],
}
