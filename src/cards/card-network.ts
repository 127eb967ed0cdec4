import type { Kysely } from 'kysely'
import { clockPartner, type Clock } from '../clock.ts'
import { InsufficientFunds, Invalid, InvalidState, NotFound } from '../errors.ts'
import { appendEvent } from '../events/event-outbox.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import {
  cardClearing,
  cardHoldChange,
  cardHoldRelease,
  cardRefund,
} from '../ledger/card-journals.ts'
import type { BatchStart, LedgerWriter } from '../ledger/ledger-writer.ts'
import { currentCommitHook } from '../db/commit-hooks.ts'
import type { Database } from '../schema.ts'
import { card_limits, type AuthorizationView, type AuthorizeRequest } from './card-contract.ts'
import { card_expiry_job_limits } from './card-limits.ts'
import { effectiveStatus, type CardRow, type CardService } from './card-service.ts'
import { lockCards } from './card-memory.ts'
import {
  authorization_desk_defaults,
  authorizationKind,
  card_authorization_desk,
  type AuthorizationJob,
  type CheckedCard,
} from './card-authorizations.ts'
import { toSast } from '../calendar/sa-calendar.ts'
import { CardMemory } from './card-memory.ts'
import { nothingSpent, spendOf, verdictOf } from './card-checks.ts'
import { authorizationView, type AuthorizationRow } from './card-views.ts'
import type { PartnerAnswer, PartnerDecider } from './card-decisions.ts'

export type { AuthorizationRow }

// The card network as the bank meets it: authorizations (and their increments), reversals,
// clearings and refunds. In the sandbox an operator plays the network (`ops.sandbox.card.*`).
// Each runs in one database transaction that locks the card first, then the authorization,
// then the account (the ledger writer's, ledger/ledger-writer.ts): two authorizations on one
// card are decided one after the other, so together they never pass a limit, and the
// account's lock keeps them within its available balance. Money moves only through the
// ledger writer, by the kinds of ledger/card-journals.ts. An authorization not cleared
// within 7 days expires (a job, hourly) and releases its hold.

export const card_expiry_job_kind = 'card.authorization_expiry'
const day_ms = 86_400_000
const hour_ms = 3_600_000
const expiry_chunk_max = 200

type Trx = Kysely<Database>
type CardEvent =
  | 'card.authorization.approved'
  | 'card.authorization.declined'
  | 'card.transaction.cleared'
  | 'card.transaction.reversed'

/** What the network needs beside the database: the ledger writer, and the partners' deciders. */
export interface CardNetworkDeps {
  /**
   * The ledger writer: its desk decides authorizations (card-authorizations.ts), its composed
   * door writes increments, reversals, clearings, refunds and expiries.
   */
  ledger: Pick<LedgerWriter<Kysely<Database>>, 'write' | 'payments' | 'startsOf'>
  decider?: PartnerDecider | undefined
}

export class CardNetwork {
  private readonly desk: { submit(job: AuthorizationJob): Promise<AuthorizationView> }

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly pinKey: Buffer,
    private readonly cards: CardService,
    private readonly deps: CardNetworkDeps,
    jobs: JobRunner,
  ) {
    const kind = authorizationKind({ pinKey, cards, memory: new CardMemory() })
    this.desk = deps.ledger.payments(kind, authorization_desk_defaults)
    jobs.register({
      kind: card_expiry_job_kind,
      ...card_expiry_job_limits,
      run: async (job) => ({ expired: await this.expire(job.signal) }),
      plan: (now: Date) => {
        const hour = new Date(Math.floor(now.getTime() / hour_ms) * hour_ms)
        return [{ key: hour.toISOString(), due_at: hour }]
      },
      per_partner: true,
    })
  }

  /** How this instance's authorization batches read their cards and accounts, so far. */
  get groupStarts(): Readonly<Record<BatchStart, number>> {
    return this.deps.ledger.startsOf(card_authorization_desk)
  }

  /** Decided in batches with the authorizations that arrive with it (card-authorizations.ts). */
  async authorize(r: AuthorizeRequest, addedBy: string): Promise<AuthorizationView> {
    const { partner, checked } = await this.askPartner(r)
    return this.desk.submit({ r, addedBy, partner, checked, hook: currentCommitHook() })
  }

  /**
   * The partner is asked (when it decides) only once the bank's own checks pass, outside the
   * locks (funds included). Under the locks those checks decide as made here while the card
   * is unchanged (its version), and are made again where it changed (card-authorizations.ts);
   * the funds are the ledger's, checked there.
   */
  private async askPartner(
    r: AuthorizeRequest,
  ): Promise<{ partner?: PartnerAnswer | undefined; checked?: CheckedCard | undefined }> {
    const decider = this.deps.decider
    const context = await decider?.contextOf(r.card_id)
    if (!decider || !context) return {}
    const { card, settings, available } = context
    const amount = BigInt(r.amount)
    if (available < amount) return {}
    const now = this.clock.now()
    const spend = (await spendOf(this.db, [card], now)).get(card.id) ?? nothingSpent()
    const verdict = verdictOf(card, r, amount, amount, spend, now, this.pinKey)
    const status = effectiveStatus(card, now)
    const checked = { version: String(card.version), day: toSast(now).date, status, verdict }
    if (verdict.reason) return { checked }
    return { partner: await decider.ask(card, r, settings), checked }
  }

  /** Adds to a pending authorization, checked as an authorization (status, limits, funds). */
  async increment(r: { authorization_id: string; amount: number }): Promise<AuthorizationView> {
    return this.onPending(r.authorization_id, async (trx, card, auth, now) => {
      const amount = BigInt(r.amount)
      const held = BigInt(auth.held)
      let reason = await this.refusal(trx, card, amount, auth)
      if (!reason) {
        const hold = {
          accountId: auth.account_id,
          txId: auth.tx_id!,
          from: held,
          to: held + amount,
        }
        if (await this.deps.ledger.write(trx, cardHoldChange, hold)) {
          const changed = { ...auth, amount: BigInt(auth.amount) + amount, held: held + amount }
          const view = await save(trx, changed, now)
          await announce(
            trx,
            'card.authorization.approved',
            card,
            view,
            { increment: r.amount },
            now,
          )
          return view
        }
        reason = 'insufficient_funds'
      }
      const view = { ...authorizationView(auth), approved: false, decline_reason: reason }
      await announce(trx, 'card.authorization.declined', card, view, { increment: r.amount }, now)
      return view
    })
  }

  /** Releases `amount` of what an authorization holds, or all of it. */
  async reverse(r: {
    authorization_id: string
    amount?: number | undefined
  }): Promise<AuthorizationView> {
    return this.onPending(r.authorization_id, async (trx, card, auth, now) => {
      const held = BigInt(auth.held)
      const amount = r.amount === undefined ? held : BigInt(r.amount)
      if (amount > held) {
        throw Invalid.field('amount', `must be at most the ${held} cents the authorization holds`)
      }
      const whole = amount === held
      const hold = { accountId: auth.account_id, txId: auth.tx_id! }
      const ledger = this.deps.ledger
      const reason = 'authorization reversed'
      if (whole) await ledger.write(trx, cardHoldRelease, { ...hold, held, reason })
      else await ledger.write(trx, cardHoldChange, { ...hold, from: held, to: held - amount })
      const status = whole ? ('reversed' as const) : auth.status
      const reversed = BigInt(auth.reversed) + amount
      const view = await save(trx, { ...auth, held: held - amount, reversed, status }, now)
      const reversal = { reversal: Number(amount) }
      await announce(trx, 'card.transaction.reversed', card, view, reversal, now)
      return view
    })
  }

  /**
   * Posts `amount` and releases the hold: less than held, or at most 15 % over it (the rest
   * then taken from the available balance). A repeat of a clearing already made with the same
   * amount answers it again; nothing moves twice.
   */
  async clear(r: { authorization_id: string; amount: number }): Promise<AuthorizationView> {
    const amount = BigInt(r.amount)
    const repeat = (auth: AuthorizationRow) =>
      auth.status === 'cleared' && BigInt(auth.cleared) === amount
        ? authorizationView(auth)
        : undefined
    return this.onPending(
      r.authorization_id,
      async (trx, card, auth, now) => {
        const held = BigInt(auth.held)
        const most = held + (held * BigInt(card_limits.over_clearing_percent)) / 100n
        if (amount > most) {
          throw Invalid.field(
            'amount',
            `must be at most ${most} cents (15 % over the ${held} held)`,
          )
        }
        const cleared = await this.deps.ledger.write(trx, cardClearing, {
          ...paymentOf(card, auth.merchant_name),
          txId: auth.tx_id!,
          held,
          cleared: amount,
        })
        if (!cleared) {
          throw new InsufficientFunds('amount',
            `the account cannot cover the ${amount - held} cents above the hold`, 422)
        }
        const view = await save(trx, { ...auth, held: 0n, cleared: amount, status: 'cleared' }, now)
        await announce(trx, 'card.transaction.cleared', card, view, cleared, now)
        // A single-use card ends with its first clearing.
        if (card.use_type === 1 && effectiveStatus(card, now) !== 'cancelled') {
          await this.cards.setStatus(trx, card, 'cancelled', now)
        }
        return view
      },
      repeat,
    )
  }

  async refund(r: { card_id: string; amount: number; merchant_name: string }) {
    return this.onCard(r.card_id, async (trx, card, now) => {
      const amount = BigInt(r.amount)
      const refund = { ...paymentOf(card, r.merchant_name), amount }
      const txId = await this.deps.ledger.write(trx, cardRefund, refund)
      const view = { card_id: card.id, account_id: card.account_id, amount: r.amount, tx_id: txId }
      await appendEvent(trx, {
        type: 'card.transaction.refunded',
        partner_id: card.partner_id,
        resource_id: card.id,
        data: { ...view, merchant_name: r.merchant_name },
        occurred_at: now,
      })
      return view
    })
  }

  /** Releases the holds of authorizations not cleared within 7 days; resolves with how many. */
  async expire(signal?: AbortSignal): Promise<number> {
    let total = 0
    for (;;) {
      const days = card_limits.authorization_expiry_days
      const before = new Date(this.clock.now().getTime() - days * day_ms)
      // A partner's own run (its sandbox clock's): its cards' authorizations only.
      const partner = clockPartner()
      let query = this.db.selectFrom('card_authorizations').select('id')
      if (partner !== undefined) query = query.where('partner_id', '=', partner)
      const due = await query
        .where('status', '=', 'pending')
        .where('created_at', '<', before)
        .orderBy('created_at')
        .limit(expiry_chunk_max)
        .execute()
      for (const { id } of due) {
        // One cleared or reversed meanwhile is no longer pending: nothing is left to expire.
        const expired = await this.onPending(
          id,
          (trx, card, auth, now) => this.expireOne(trx, card, auth, now),
          authorizationView,
        )
        if (expired.status === 'expired') total++
      }
      if (due.length < expiry_chunk_max || signal?.aborted) return total
    }
  }

  private async expireOne(trx: Trx, card: CardRow, auth: AuthorizationRow, now: Date) {
    const held = BigInt(auth.held)
    const reason = `authorization expired after ${card_limits.authorization_expiry_days} days`
    const hold = { accountId: auth.account_id, txId: auth.tx_id!, held, reason }
    await this.deps.ledger.write(trx, cardHoldRelease, hold)
    const reversed = BigInt(auth.reversed) + held
    const view = await save(trx, { ...auth, held: 0n, reversed, status: 'expired' }, now)
    await announce(trx, 'card.transaction.reversed', card, view, { reversal: Number(held) }, now)
    return view
  }

  /**
   * Runs `change` with the card locked (the ledger writer forgets the account it writes in
   * what payment batches remember).
   */
  private async onCard<T>(
    cardId: string,
    change: (trx: Trx, card: CardRow, now: Date) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      // Locked, and its version raised: a change to what it has spent is a change to it.
      const [card] = await lockCards(trx, [cardId])
      if (!card) throw new NotFound('card')
      return change(trx, card, this.clock.now())
    })
  }

  /**
   * Runs `change` on a pending authorization, with its card, itself and (by the change) its
   * account locked in that order. An authorization no longer pending answers `settled`'s
   * view when it gives one (a repeat), else 409.
   */
  private async onPending(
    authorizationId: string,
    change: (
      trx: Trx,
      card: CardRow,
      auth: AuthorizationRow,
      now: Date,
    ) => Promise<AuthorizationView>,
    settled: (auth: AuthorizationRow) => AuthorizationView | undefined = () => undefined,
  ): Promise<AuthorizationView> {
    const first = await this.db
      .selectFrom('card_authorizations')
      .select('card_id')
      .where('id', '=', authorizationId)
      .executeTakeFirst()
    if (!first) throw new NotFound('authorization')
    return this.onCard(first.card_id, async (trx, card, now) => {
      const auth = await trx
        .selectFrom('card_authorizations')
        .selectAll()
        .where('id', '=', authorizationId)
        .forUpdate()
        .executeTakeFirstOrThrow()
      if (auth.status === 'pending') return change(trx, card, auth, now)
      const again = settled(auth)
      if (again) return again
      throw new InvalidState(`the authorization is ${auth.status}, not pending`, [], 409)
    })
  }

  /**
   * Why the network must decline an increment of `auth`, or undefined: the card's status
   * and limits (card-checks.ts; a passed auto-lock time freezes the card now). The funds are
   * checked by the ledger, last.
   */
  private async refusal(trx: Trx, card: CardRow, amount: bigint, auth: AuthorizationRow) {
    const now = this.clock.now()
    const spend = (await spendOf(trx, [card], now)).get(card.id) ?? nothingSpent()
    const total = BigInt(auth.amount) - BigInt(auth.reversed) + amount
    const verdict = verdictOf(card, null, amount, total, spend, now, this.pinKey)
    if (verdict.freeze) await this.cards.setStatus(trx, card, 'frozen', now)
    return verdict.reason
  }
}

/** What a card journal needs of the card and its merchant. */
function paymentOf(card: CardRow, merchantName: string) {
  return {
    accountId: card.account_id,
    merchantName,
    last4: card.last_4,
    userId: card.holder_user_id,
  }
}

/** Writes an authorization's changed amounts and status; answers its view. */
async function save(trx: Trx, auth: AuthorizationRow, now: Date): Promise<AuthorizationView> {
  const { amount, held, reversed, cleared, status } = auth
  await trx
    .updateTable('card_authorizations')
    .set({ amount, held, reversed, cleared, status, updated_at: now })
    .where('id', '=', auth.id)
    .execute()
  return authorizationView({ ...auth, updated_at: now })
}

async function announce(
  trx: Trx,
  type: CardEvent,
  card: CardRow,
  view: AuthorizationView,
  extra: Record<string, unknown>,
  now: Date,
): Promise<void> {
  await appendEvent(trx, {
    type,
    partner_id: card.partner_id,
    resource_id: view.authorization_id,
    data: { ...view, ...extra },
    occurred_at: now,
  })
}
