import { methodGroups, type OperatorMethods } from './method-groups.ts'
import { NatsApi, type ConnectionOptions } from './transport.ts'

// The method groups are declared through this interface, which merges with the class:
// their names and types come from the contract (see method-groups.ts).
export interface OperatorClient extends OperatorMethods {}

/**
 * The bank operator's client for the `ops.` subjects, e.g. `operator.partners.create`,
 * `operator.entities.review`; the CLI is built on it.
 */
export class OperatorClient {
  private readonly api: NatsApi

  constructor(options: ConnectionOptions) {
    this.api = new NatsApi(options)
    Object.assign(this, methodGroups(this.api, 'operator', () => undefined))
  }

  close(): Promise<void> {
    return this.api.close()
  }
}
