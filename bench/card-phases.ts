import { randomInt } from 'node:crypto'
import pg from 'pg'
import type { NatsConnection } from '@nats-io/transport-node'
import { CardNetworkClient, type BankClient, type OperatorClient } from '../src/client/index.ts'
import { luhnCheckDigit } from '../src/contract/fields.ts'

// The card phases of the benchmark (bench/run.ts): card authorizations as a card network
// connected for real sends them (`net.card.authorize`, with a card network credential an
// operator issued: no operator audit row), as many in flight as the transfer phases.
// card-spread: one card on each of the 1,000 accounts of the spread phase, authorizations
// taken from them in turn; card-hot: BENCH_HOT_CARDS cards (8) on the hot account, taken in
// turn. The cards are issued beforehand, not timed, as a partner
// issues them: a request by the holder, approved by another KYC-approved user of the entity
// (four eyes), through the SDK; their ids are then read from the database in one query.

export const hot_cards = Number(process.env.BENCH_HOT_CARDS ?? 8)
/** How many card requests (and then approvals) are sent at once while issuing. */
const issue_in_flight = 64

export interface BenchCards {
  /** One card per account of the spread phase, in the order of `accounts`. */
  spread: string[]
  /** `hot_cards` cards on the hot account. */
  hot: string[]
  /** Seconds it took to issue them all (requests, approvals and the query). */
  issue_s: number
}

/** A KYC-approved user of the entity (the partner relies on its own KYC: `verified`). */
async function approvedUser(client: BankClient, entityId: string, email: string) {
  const body = `850630${String(randomInt(10_000)).padStart(4, '0')}08`
  const { userId } = await client.users.create({
    entity_id: entityId,
    first_name: 'Sipho',
    last_name: 'Dlamini',
    email,
    phone_number: '+27831234567',
    gender: 'male',
    date_of_birth: '1985-06-30T00:00:00Z',
    country: 'ZAF',
    city: 'Johannesburg',
    residency: 'citizen',
    id_number: body + luhnCheckDigit(body),
    id_type: 'National',
    id_issue_date: '2003-07-01T00:00:00Z',
    title: 'Mr',
    verified: true,
    permit_number: 'NA',
    address: {
      address_line_1: '1 Long Street',
      city: 'Cape Town',
      postcode: '8001',
      country: 'ZAF',
    },
  } as never)
  return userId as string
}

/**
 * Issues a virtual card on each of `accounts` and `hot_cards` on `hot`: requested for one
 * user, approved by another, `issue_in_flight` at a time.
 */
export async function issueBenchCards(
  client: BankClient,
  entityId: string,
  accounts: string[],
  hot: string,
  dbUrl: string,
): Promise<BenchCards> {
  const t0 = performance.now()
  const holder = await approvedUser(client, entityId, 'card.holder@bench.example')
  const approver = await approvedUser(client, entityId, 'card.approver@bench.example')
  const issue = async (account_id: string, name: string) => {
    const request = { account_id, user_id: holder, name, type: 0, use_type: 0 }
    const { id } = await client.cards.request(request)
    const answer = { entity_id: entityId, account_id, initiator: approver, approved: true }
    await client.cards.respondToRequest({ ...answer, request_id: id })
  }
  const wanted = [
    ...accounts.map((a) => [a, 'Bench card'] as const),
    ...Array.from({ length: hot_cards }, (_, i) => [hot, `Hot card ${i + 1}`] as const),
  ]
  let next = 0
  const worker = async () => {
    while (next < wanted.length) {
      const [account, name] = wanted[next++]!
      await issue(account, name)
    }
  }
  await Promise.all(Array.from({ length: issue_in_flight }, worker))
  const db = new pg.Client({ connectionString: dbUrl })
  await db.connect()
  const { rows } = await db.query<{ id: string; account_id: string }>(
    "select id, account_id from cards where status = 'active' order by created_seq",
  )
  await db.end()
  const byAccount = new Map(rows.map((r) => [r.account_id, r.id]))
  const spread = accounts.map((a) => byAccount.get(a)!)
  const hotIds = rows.filter((r) => r.account_id === hot).map((r) => r.id)
  if (spread.some((id) => !id) || hotIds.length !== hot_cards) {
    throw new Error('card set-up: a card was not issued')
  }
  return { spread, hot: hotIds, issue_s: Math.round(performance.now() - t0) / 1000 }
}

/**
 * The card network's client on the bench's connection, with a credential the operator
 * issues for it (`ops.credential.create_card_network`), as a bank connects its network.
 */
export async function connectCardNetwork(nc: NatsConnection,
    operator: OperatorClient): Promise<CardNetworkClient> {
  const { token } = await operator.credentials.createCardNetwork({ label: 'bench card network' })
  return new CardNetworkClient({ connection: nc, token, timeoutMs: 60_000 })
}

/** Declined authorizations by reason, over the phases (each also counts as an error). */
export const declines: Record<string, number> = {}

/**
 * One authorization of 100 cents on `cardId`: a domestic chip payment at a till, no PIN.
 * A decline rejects (the phase counts it as an error).
 */
export async function authorizeOnCard(network: CardNetworkClient,
    cardId: string): Promise<void> {
  const view = await network.card.authorize({
    card_id: cardId,
    amount: 100,
    merchant_name: 'Bench Cafe',
    mcc: '5812',
    merchant_country: 'ZAF',
    channel: 'pos',
    entry_mode: 'chip',
  })
  if (!view.approved) {
    const reason = view.decline_reason ?? 'unknown'
    declines[reason] = (declines[reason] ?? 0) + 1
    throw new Error(`declined: ${reason}`)
  }
}

/** Paired authorizations of the decision round trip: one asked of the partner, one not. */
const decision_pairs = Number(process.env.BENCH_DECISION_PAIRS ?? 200)

/**
 * What asking the partner adds to an authorization: `decision_pairs` pairs, one at a time,
 * each an authorization with the partner's decision service on (it answers at once, from
 * this process) and one with it off, alternated so that both meet the same moment of a
 * noisy machine. Answers the medians and their difference.
 */
export async function decisionRoundTrip(
  client: BankClient,
  nc: NatsConnection,
  network: CardNetworkClient,
  cardId: string,
) {
  const subject = 'decisions.bench'
  const sub = nc.subscribe(subject, {
    callback: (_e, msg) => {
      msg.respond('{"approve":true}')
    },
  })
  await nc.flush()
  const asked: number[] = []
  const alone: number[] = []
  const timed = async (into: number[]) => {
    const t0 = performance.now()
    await authorizeOnCard(network, cardId)
    into.push(performance.now() - t0)
  }
  for (let i = 0; i < decision_pairs; i++) {
    await client.cards.setAuthorizationDecisions({ subject, stand_in: 'decline' })
    await timed(asked)
    await client.cards.setAuthorizationDecisions({})
    await timed(alone)
  }
  sub.unsubscribe()
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    return Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100
  }
  const [withPartner, without] = [median(asked), median(alone)]
  return {
    decision_pairs,
    decision_p50_ms: withPartner,
    decision_alone_p50_ms: without,
    decision_added_ms: Math.round((withPartner - without) * 100) / 100,
  }
}
