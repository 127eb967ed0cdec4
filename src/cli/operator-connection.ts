import { natsAuthFromEnv, natsConnectOptions } from '../nats/nats-connect.ts'
import { default_timeout_ms } from '../client/transport.ts'
import { OperatorClient } from '../client/operator-client.ts'
import { operatorToken } from './cli-context.ts'
import { locateNatsUrl } from '../client/locate.ts'

/**
 * The CLI's client of the bank; `sources` lets a refusal name the setting it used (e.g. the
 * token file). The commands derived from the contract and `bank screening load` use it.
 */
export function operatorClient(env: NodeJS.ProcessEnv): OperatorClient {
  const url = locateNatsUrl(env)
  const token = operatorToken(env)
  return new OperatorClient({
    servers: url.value,
    token: token.value,
    timeoutMs: default_timeout_ms,
    login: natsConnectOptions(natsAuthFromEnv(env)),
    sources: { servers: url.from, token: token.from },
  })
}
