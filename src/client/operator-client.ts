import { dataDirOf, locateNatsUrl, locateOperatorToken, type Located, type LocateOptions } from './locate.ts'
import { methodGroups, type OperatorMethods } from './method-groups.ts'
import { checkOptions, NatsApi, type ConnectionOptions } from './transport.ts'
import { natsAuthFromEnv, natsConnectOptions } from '../nats/nats-connect.ts'

// The method groups are declared through this interface, which merges with the class:
// their names and types come from the contract (see method-groups.ts).
export interface OperatorClient extends OperatorMethods {}

/**
 * The bank operator's client for the `ops.` subjects, e.g. `operator.partners.create`,
 * `operator.entities.review`; the CLI is built on it.
 */
export class OperatorClient {
  private readonly api: NatsApi

  /**
   * A client set up the way the CLI finds the bank: the NATS URL from NATS_URL, else
   * `<BANK_DATA_DIR or ./.data>/nats-url`, else nats://127.0.0.1:4222; the credential from
   * BANK_OPERATOR_TOKEN, else `<data dir>/operator-token`. None found is a
   * BankSettingError naming both; errors later name the setting at fault.
   */
  static fromEnv(options: LocateOptions = {}): OperatorClient {
    const env = options.env ?? process.env
    return OperatorClient.located(locateNatsUrl(env), locateOperatorToken(env), { ...options, env })
  }

  /**
   * A client for the bank whose data directory is `dir` (default BANK_DATA_DIR, else
   * ./.data), from that directory's files only: `nats-url` (else nats://127.0.0.1:4222) and
   * `operator-token`.
   */
  static fromDataDir(dir?: string, options: LocateOptions = {}): OperatorClient {
    const directory = dir ?? dataDirOf(options.env ?? process.env)
    return OperatorClient.located(locateNatsUrl({}, directory), locateOperatorToken({}, directory),
      options)
  }

  private static located(url: Located, token: Located, options: LocateOptions): OperatorClient {
    return new OperatorClient({
      servers: url.value,
      token: token.value,
      login: natsConnectOptions(natsAuthFromEnv(options.env ?? process.env)),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      sources: { servers: url.from, token: token.from },
    })
  }

  constructor(options: ConnectionOptions) {
    checkOptions(options, 'new OperatorClient')
    this.api = new NatsApi(options)
    Object.assign(this, methodGroups(this.api, 'operator', () => undefined))
  }

  close(): Promise<void> {
    return this.api.close()
  }
}
