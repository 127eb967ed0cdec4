import type { Operation } from '../../contract/index.ts'
import type { Endpoint } from './endpoint.ts'

// The endpoint table is the modules' endpoints (each capability binds its operations to its
// handlers in its declaration, src/<folder>/<folder>-module.ts; src/module.ts collects them).
// What is left here: the check that every operation of the contract has a handler.

export function unboundOperations(table: Endpoint[], operations: Operation[]): Operation[] {
  const bound = new Set(table.map((e) => e.operation))
  return operations.filter((op) => !bound.has(op))
}
