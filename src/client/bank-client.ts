import { scopeOf, type Operation } from '../contract/operation.ts'
import { dataDirOf, locateNatsUrl, locatePartner, type Located, type LocateOptions } from './locate.ts'
import { methodGroups } from './method-groups.ts'
import type { PartnerMethodGroups } from './generated/partner-methods.ts'
import { checkOptions, NatsApi, type ConnectionOptions } from './transport.ts'
import { checkRetryOptions, type RetryOptions } from './retry.ts'
import { addUploads, type PartnerMethodsWithUploads } from './uploads.ts'
import { natsAuthFromEnv, natsConnectOptions } from '../nats/nats-connect.ts'

export interface BankClientOptions extends ConnectionOptions {
  partnerId: string
  /**
   * Send a request again after a timeout or a 503, when that cannot do the work twice: a read,
   * or a write that carries its idempotency key (`clientTxId`, `bulk_payment_id`), with the
   * same key. A retried transfer or debit order that the bank took the first time answers with
   * the original. Off by default (`attempts: 1`). See docs/guides/retries-and-idempotency.md.
   */
  retry?: RetryOptions
}

// The method groups are declared through this interface, which merges with the class: the
// generated declarations (src/client/generated/partner-methods.ts, `npm run sdk:types`), with
// each method's TSDoc and named types, which method-groups.ts holds to the contract's, plus
// the uploads (`kyc.uploadDocuments`, `kyb.uploadDocuments`: uploads.ts).
export interface BankClient extends PartnerMethodsWithUploads {}

/**
 * The partner SDK: one method per partner operation of the bank, typed from the same
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

  /**
   * A client set up the way the CLI finds the bank: the NATS URL from NATS_URL, else
   * `<BANK_DATA_DIR or ./.data>/nats-url`, else nats://127.0.0.1:4222; the partner's id and
   * credential from BANK_PARTNER_ID and BANK_PARTNER_TOKEN. A missing one is a
   * BankSettingError naming it; errors later name the setting at fault.
   */
  static fromEnv(options: LocateOptions = {}): BankClient {
    const env = options.env ?? process.env
    return BankClient.located(locateNatsUrl(env), env, options)
  }

  /**
   * A client for the bank whose data directory is `dir` (default BANK_DATA_DIR, else
   * ./.data): the NATS URL from its `nats-url` file only (else nats://127.0.0.1:4222). A data
   * directory holds no partner credential, so the id and token still come from
   * BANK_PARTNER_ID and BANK_PARTNER_TOKEN.
   */
  static fromDataDir(dir?: string, options: LocateOptions = {}): BankClient {
    const env = options.env ?? process.env
    return BankClient.located(locateNatsUrl(env, dir ?? dataDirOf(env)), env, options)
  }

  private static located(url: Located, env: NodeJS.ProcessEnv, options: LocateOptions): BankClient {
    const { partnerId, token } = locatePartner(env)
    return new BankClient({
      servers: url.value,
      token: token.value,
      partnerId: partnerId.value,
      login: natsConnectOptions(natsAuthFromEnv(env)),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      sources: { servers: url.from, token: token.from, partnerId: partnerId.from },
    })
  }

  constructor(options: BankClientOptions) {
    checkOptions(options, 'new BankClient', { partnerId: options?.partnerId })
    checkRetryOptions(options.retry, 'new BankClient')
    this.api = new NatsApi(options, options.partnerId, options.retry)
    this.partnerId = options.partnerId
    Object.assign(this, methodGroups(this.api, 'partner', (op, request) => this.subjectIdOf(op,
      request)))
    addUploads(this as unknown as PartnerMethodGroups, this.api)
  }

  /** `<partner_id>` is the caller's own id; an `<entity_id>` subject names the request's entity. */
  private subjectIdOf(op: Operation, request: Record<string, unknown>): string | undefined {
    return scopeOf(op) === 'entity' ? String(request.entity_id ?? '') : this.partnerId
  }

  close(): Promise<void> {
    return this.api.close()
  }
}
