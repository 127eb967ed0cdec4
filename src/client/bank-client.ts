import { contract } from '../contract/index.ts'
import type { RequestOf } from '../contract/operation.ts'
import { NatsApi, type ConnectionOptions } from './transport.ts'

const { entities: E, users: U, accounts: A, transfers: T } = contract

export interface BankClientOptions extends ConnectionOptions {
  partnerId: string
}

/**
 * The partner SDK: one method per operation of interface.md, typed from the same
 * contract the service validates with. Errors are thrown as `BankApiError`.
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
  }

  readonly entities = {
    create: (r: RequestOf<typeof E.create>) => this.api.call(E.create, r, this.partnerId),
    info: (r: RequestOf<typeof E.info>) => this.api.call(E.info, r, this.partnerId),
    list: (r: RequestOf<typeof E.list> = {}) => this.api.call(E.list, r, this.partnerId),
    updateAddress: (r: RequestOf<typeof E.updateAddress>) => this.api.call(E.updateAddress, r, this.partnerId),
  }

  readonly users = {
    create: (r: RequestOf<typeof U.create>) => this.api.call(U.create, r, this.partnerId),
    update: (r: RequestOf<typeof U.update>) => this.api.call(U.update, r, this.partnerId),
    get: (r: RequestOf<typeof U.get>) => this.api.call(U.get, r, this.partnerId),
    list: (r: RequestOf<typeof U.list> = {}) => this.api.call(U.list, r, this.partnerId),
  }

  readonly accounts = {
    create: (r: RequestOf<typeof A.create>) => this.api.call(A.create, r, this.partnerId),
    getByEntity: (r: RequestOf<typeof A.getByEntity>) => this.api.call(A.getByEntity, r, this.partnerId),
    getDetails: (r: RequestOf<typeof A.getDetails>) => this.api.call(A.getDetails, r, this.partnerId),
    /** EFT, or RTC with `pay_and_clear: true`. */
    transfer: (r: RequestOf<typeof T.transfer>) => this.api.call(T.transfer, r, this.partnerId),
    listTransactions: (r: RequestOf<typeof T.list>) => this.api.call(T.list, r, this.partnerId),
    getTransaction: (r: RequestOf<typeof T.getTransaction>) => this.api.call(T.getTransaction, r, this.partnerId),
  }

  close(): Promise<void> {
    return this.api.close()
  }
}
