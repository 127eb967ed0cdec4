import { methodGroups, type CardNetworkMethods } from './method-groups.ts'
import { checkOptions, NatsApi, type ConnectionOptions } from './transport.ts'

// The method groups are declared through this interface, which merges with the class:
// their names and types come from the contract (see method-groups.ts).
export interface CardNetworkClient extends CardNetworkMethods {}

/**
 * The card network's client for its own subjects (`net.card.*`), with a card network
 * credential (`cnk_…`, `bank credential create-card-network`), e.g.
 * `network.card.authorize(…)`, `network.card.clear(…)`. Where the bank is the NATS authority,
 * connect with the card network's NATS user (`card-network.creds` from `bank nats init`).
 *
 *   const network = new CardNetworkClient({ servers: 'nats://127.0.0.1:4222', token })
 *   const { authorization_id, approved } = await network.card.authorize({ card_id, … })
 */
export class CardNetworkClient {
  private readonly api: NatsApi

  constructor(options: ConnectionOptions) {
    checkOptions(options, 'new CardNetworkClient')
    this.api = new NatsApi(options)
    Object.assign(this, methodGroups(this.api, 'card_network', () => undefined))
  }

  close(): Promise<void> {
    return this.api.close()
  }
}
