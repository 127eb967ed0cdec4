import { contract } from '../contract/index.ts'
import type { RequestOf } from '../contract/operation.ts'
import { NatsApi, type ConnectionOptions } from './transport.ts'

const O = contract.operators

/** The bank operator's client for the `ops.` subjects; the CLI is built on it. */
export class OperatorClient {
  private readonly api: NatsApi

  constructor(options: ConnectionOptions) {
    this.api = new NatsApi(options)
  }

  readonly partners = {
    create: (r: RequestOf<typeof O.partnerCreate>) => this.api.call(O.partnerCreate, r),
    list: () => this.api.call(O.partnerList, {}),
  }

  readonly credentials = {
    create: (r: RequestOf<typeof O.credentialCreate>) => this.api.call(O.credentialCreate, r),
    revoke: (r: RequestOf<typeof O.credentialRevoke>) => this.api.call(O.credentialRevoke, r),
    list: (r: RequestOf<typeof O.credentialList>) => this.api.call(O.credentialList, r),
  }

  readonly entities = {
    review: (r: RequestOf<typeof O.entityReview>) => this.api.call(O.entityReview, r),
    list: (r: RequestOf<typeof O.entityList>) => this.api.call(O.entityList, r),
  }

  readonly users = {
    kyc: (r: RequestOf<typeof O.userKyc>) => this.api.call(O.userKyc, r),
  }

  readonly accounts = {
    list: (r: RequestOf<typeof O.accountList>) => this.api.call(O.accountList, r),
    deposit: (r: RequestOf<typeof O.accountDeposit>) => this.api.call(O.accountDeposit, r),
  }

  readonly ledger = {
    verify: () => this.api.call(O.ledgerVerify, {}),
  }

  readonly clearing = {
    run: () => this.api.call(O.clearingRun, {}),
  }

  close(): Promise<void> {
    return this.api.close()
  }
}
