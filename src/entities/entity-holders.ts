import type { Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import type { EntityCreateRequest } from './entity-contract.ts'

// A personal entity has one user, its holder, created and decided with the entity in the
// entity's database transaction. Users belong to the users capability, which builds on
// entities (a user names its entity); so entities name here what they need of users, and
// UserService provides it (the composition root hands it to EntityService). Entities import
// nothing of users/.

/** The personal details a personal entity's automatic user is created with. */
export type HolderDetails = Omit<
  Extract<EntityCreateRequest, { entity_type: 'personal' }>,
  'entity_type'
>

export interface EntityHolders {
  /** Creates the entity's holder on the caller's executor; returns the user's id. */
  createHolder(
    executor: Kysely<Database>,
    partnerId: string,
    entityId: string,
    person: HolderDetails,
    now: Date,
  ): Promise<string>
  /** Records the bank's decision on a personal entity's KYC on its holder too. */
  decideHolderKyc(
    executor: Kysely<Database>,
    entityId: string,
    decision: { approve: true } | { approve: false; reason: string },
    now: Date,
  ): Promise<void>
}
