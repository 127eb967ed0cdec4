import { scopeOf, type Operation } from '../contract/operation.ts'
import { methodGroups, type PartnerMethods } from './method-groups.ts'
import { NatsApi, type ConnectionOptions } from './transport.ts'

export interface BankClientOptions extends ConnectionOptions {
  partnerId: string
}

// The method groups are declared through this interface, which merges with the class:
// their names and types come from the contract (see method-groups.ts).
export interface BankClient extends PartnerMethods {}

/**
 * The partner SDK: one method per operation of interface.md, typed from the same
 * contract the service validates with, in the groups `entities`, `users` and `accounts`
 * (e.g. `bank.accounts.transfer`, `bank.accounts.listTransactions`). Errors are thrown as
 * `BankApiError`.
 *
 *   const bank = new BankClient({ servers: 'nats://127.0.0.1:4222', token, partnerId })
 *   const { id } = await bank.entities.create({ entity_type: 'business', ... })
 */
export class BankClient {
  private readonly api: NatsApi
  readonly partnerId: string

  constructor(options: BankClientOptions) {
    this.api = new NatsApi(options)
    this.partnerId = options.partnerId
    Object.assign(this, methodGroups(this.api, 'partner', (op, request) => this.subjectIdOf(op, request)))
  }

  /** `<partner_id>` is the caller's own id; an `<entity_id>` subject names the request's entity. */
  private subjectIdOf(op: Operation, request: Record<string, unknown>): string | undefined {
    return scopeOf(op) === 'entity' ? String(request.entity_id ?? '') : this.partnerId
  }

  close(): Promise<void> {
    return this.api.close()
  }
}
