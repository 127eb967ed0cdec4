import type { Kysely } from 'kysely'
import { AccountService } from './accounts/account-service.ts'
import { CredentialStore } from './auth/credential-store.ts'
import type { Clock } from './clock.ts'
import type { Config } from './config.ts'
import type { Database } from './db/schema.ts'
import { EntityService } from './entities/entity-service.ts'
import { OperatorService } from './operators/operator-service.ts'
import { UserService } from './users/user-service.ts'

export interface Services {
  credentials: CredentialStore
  entities: EntityService
  users: UserService
  accounts: AccountService
  operators: OperatorService
}

/** Composition by hand: plain constructors, in dependency order. */
export function createServices(db: Kysely<Database>, clock: Clock, config: Config): Services {
  const credentials = new CredentialStore(db, clock)
  const entities = new EntityService(db, clock)
  const users = new UserService(db, clock, entities)
  const accounts = new AccountService(
    db,
    clock,
    entities,
    { first: config.accountNumberFirst, last: config.accountNumberLast },
    config.defaultCountry,
  )
  const operators = new OperatorService(db, clock, credentials, entities, accounts)
  return { credentials, entities, users, accounts, operators }
}
