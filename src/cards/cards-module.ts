import type { Module } from '../module.ts'
import { CardService } from './card-service.ts'
import { CardNetwork } from './card-network.ts'
import { PartnerDecisions, type DecisionTransport } from './card-decisions.ts'
import type { CardTables } from './card-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { card_limits } from './card-contract.ts'
import { card_expiry_job_limits } from './card-limits.ts'
import { cardDecisionsMigration, cardsMigration, cardVersionsMigration } from './card-migration.ts'
import { card_expiry_job_kind } from './card-network.ts'

/** Without a NATS connection to ask partners on, every decision is the partner's stand-in. */
const noDecisions: DecisionTransport = () => Promise.reject(new Error('no NATS connection'))

/** What the module builds: its members of the bank's Services. */
export interface CardServices {
  /** Cards: issuing and controls. */
  cards: CardService
  /** The card network's authorizations, clearings, reversals and refunds. */
  cardNetwork: CardNetwork
  /** Partners' real-time card authorization decisions. */
  cardDecisions: PartnerDecisions
}

// Cards: issuing and controls for partners (`svc.card.`), and the card network, simulated in
// the sandbox (`ops.sandbox.card.`).
export const cardsModule: Module<CardServices, CardTables> = {
  name: 'cards',
  reads: {
    accounts: 'a partner\'s decision is asked with the account\'s available balance, read ' +
      'with the card in one query',
  },
  needs: ['ledger', 'jobs'],
  services: (s, { db, clock, config, given }) => {
    const cards = new CardService(db, clock, s.secretBox, { bin: config.cardBin })
    const cardDecisions = new PartnerDecisions(db, clock, given.cardDecisions ?? noDecisions)
    const cardNetwork = new CardNetwork(db, clock, cards.pinKey, cards,
      { ledger: s.ledgerWriter, decider: cardDecisions }, s.jobRunner)
    return { cards, cardNetwork, cardDecisions }
  },
  migrations: {
    '0024_cards': cardsMigration,
    '0025_card_decisions': cardDecisionsMigration,
    '0029_card_versions': cardVersionsMigration,
  },
  limits: { ...card_limits, expiry_job: card_expiry_job_limits },
  endpoints: (s) => [
    endpoint(contract.cards.request, (r, c) => s.cards.request(partnerOf(c), r)),
    endpoint(contract.cards.listRequests, (r, c) => s.cards.listRequests(partnerOf(c), r)),
    endpoint(contract.cards.respondToRequest, (r, c) => s.cards.respond(partnerOf(c), r)),
    endpoint(contract.cards.edit, (r, c) => s.cards.edit(partnerOf(c), r)),
    endpoint(contract.cards.listCards, (r, c) => s.cards.list(partnerOf(c), r)),
    endpoint(contract.cards.getDetails, (r, c) =>
      s.cards.details(partnerOf(c), c.caller.credentialId, r),
    ),
    endpoint(contract.cards.updateStatus, (r, c) => s.cards.updateStatus(partnerOf(c), r)),
    endpoint(contract.cards.activate, (r, c) => s.cards.activate(partnerOf(c), r)),
    endpoint(contract.cards.setPin, (r, c) => s.cards.setPin(partnerOf(c), r)),
    endpoint(contract.cards.setDecisions, (r, c) => s.cardDecisions.set(partnerOf(c), r)),
    endpoint(contract.cards.getDecisions, (_r, c) => s.cardDecisions.settings(partnerOf(c))),
    endpoint(contract.cardNetwork.authorize, (r, c) =>
      s.cardNetwork.authorize(r, c.caller.credentialId),
    ),
    endpoint(contract.cardNetwork.increment, (r) => s.cardNetwork.increment(r)),
    endpoint(contract.cardNetwork.reverse, (r) => s.cardNetwork.reverse(r)),
    endpoint(contract.cardNetwork.clear, (r) => s.cardNetwork.clear(r)),
    endpoint(contract.cardNetwork.refund, (r) => s.cardNetwork.refund(r)),
    endpoint(contract.network.authorize, (r, c) =>
      s.cardNetwork.authorize(r, c.caller.credentialId),
    ),
    endpoint(contract.network.increment, (r) => s.cardNetwork.increment(r)),
    endpoint(contract.network.reverse, (r) => s.cardNetwork.reverse(r)),
    endpoint(contract.network.clear, (r) => s.cardNetwork.clear(r)),
    endpoint(contract.network.refund, (r) => s.cardNetwork.refund(r)),
  ],
  jobKinds: [card_expiry_job_kind],
}
