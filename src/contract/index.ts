import { accountOperations } from '../accounts/account-contract.ts'
import { entityOperations } from '../entities/entity-contract.ts'
import { operatorOperations } from '../operators/operator-contract.ts'
import { transferOperations } from '../transfers/transfer-contract.ts'
import { userOperations } from '../users/user-contract.ts'
import type { Operation } from './operation.ts'

// Every operation the service offers, grouped as the SDK exposes them. The endpoint table
// binds a handler to each; a test checks that none is left without one.
export const contract = {
  entities: entityOperations,
  users: userOperations,
  accounts: accountOperations,
  transfers: transferOperations,
  operators: operatorOperations,
} as const

export function allOperations(): Operation[] {
  return Object.values(contract).flatMap((group) => Object.values(group) as Operation[])
}

export * from './operation.ts'
