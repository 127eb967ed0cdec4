import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { AuthorizeRequest } from './card-contract.ts'
import type { CardRow } from './card-service.ts'

// Real-time authorization decisions by the partner. A partner that sets a decision subject
// (svc.card.<partner_id>.set_authorization_decisions) is asked about each authorization of
// its cards once the bank's own checks pass: the bank sends a request on that subject,
// inside the partner's own NATS account when the bank is its NATS authority, and waits at
// most 1 s. No answer in time, or an answer that is not `{approve, reason?}`, gets the
// partner's stand-in choice (decline unless it chose approve). The partner's reason is
// shown with a decline (`decline_message`).
//
// Most authorizations are of partners that serve no decisions, and a read per
// authorization to learn so cost more than the rest of its decision (docs/performance.md).
// Each instance remembers which partners serve decisions, and whose each card is (a card
// never changes partner), and reads only for a card of a deciding partner or one it has
// not met. A partner's change clears the memory at once on the instance that made it and,
// through `onChanged` (a NATS broadcast), on every other; the memory is read again at most
// `deciders_fresh_ms` after it was read, which bounds how long a lost broadcast can leave
// an instance deciding without asking a partner that has just set its subject.

/** A partner's answer to an authorization it was asked about. */
export interface PartnerAnswer {
  approve: boolean
  reason?: string | undefined
}

/** A partner's own decision service (card-decisions.ts); absent, the bank decides alone. */
export interface PartnerDecider {
  /** The card, its partner's decision subject and the funds; undefined when it serves none. */
  contextOf(cardId: string): Promise<DecisionContext | undefined>
  /** Asks the partner; its stand-in choice when it does not answer in time. */
  ask(
    card: CardRow,
    request: AuthorizeRequest,
    settings: DecisionContext['settings'],
  ): Promise<PartnerAnswer>
}

export const decision_timeout_ms = 1_000
/** How long an instance's memory of which partners decide is used before it is read again. */
export const deciders_fresh_ms = 2_000
/** Cards whose partner an instance remembers (a few MB; the oldest met are forgotten first). */
const card_partners_max = 100_000
export const decision_reason_length_max = 200

/** How the bank sends a decision request into a partner's account; rejects on no answer. */
export type DecisionTransport = (
  partnerId: string,
  subject: string,
  payload: string,
  timeoutMs: number,
) => Promise<string>

const answer = z.object({
  approve: z.boolean(),
  reason: z.string().max(decision_reason_length_max).optional(),
})

/** What the bank knows before asking: the card, the partner's setting, the funds available. */
export interface DecisionContext {
  card: CardRow
  settings: { subject: string; stand_in: 'approve' | 'decline' }
  available: bigint
}

export interface DecisionSettings {
  subject: string | null
  stand_in: 'approve' | 'decline'
}

export class PartnerDecisions implements PartnerDecider {
  /** The partners that serve decisions, and until when (process time) that may be used. */
  private deciders: { partners: ReadonlySet<string>; freshUntil: number } | undefined
  private readonly cardPartners = new Map<string, string>()
  /** Told when this instance changed a partner's setting (app.ts tells the other instances). */
  onChanged: () => void = () => {}

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly send: DecisionTransport,
  ) {}

  async settings(partnerId: string): Promise<DecisionSettings> {
    const row = await this.db
      .selectFrom('card_decision_settings')
      .select(['subject', 'stand_in'])
      .where('partner_id', '=', partnerId)
      .executeTakeFirst()
    return row ?? { subject: null, stand_in: 'decline' }
  }

  async set(
    partnerId: string,
    settings: { subject?: string | undefined; stand_in?: 'approve' | 'decline' | undefined },
  ): Promise<DecisionSettings> {
    const now = this.clock.now()
    const values = { subject: settings.subject ?? null, stand_in: settings.stand_in ?? 'decline' }
    await this.db
      .insertInto('card_decision_settings')
      .values({ partner_id: partnerId, ...values, updated_at: now })
      .onConflict((oc) => oc.column('partner_id').doUpdateSet({ ...values, updated_at: now }))
      .execute()
    this.forget()
    this.onChanged()
    return values
  }

  /** Drops what this instance remembers of who decides (a setting changed somewhere). */
  forget(): void {
    this.deciders = undefined
  }

  /** Whether the card's partner may serve decisions: false only when this instance knows not. */
  private async mayDecide(cardId: string): Promise<boolean> {
    const now = performance.now()
    if (!this.deciders || this.deciders.freshUntil <= now) {
      const rows = await this.db
        .selectFrom('card_decision_settings')
        .select('partner_id')
        .where('subject', 'is not', null)
        .execute()
      this.deciders = {
        partners: new Set(rows.map((row) => row.partner_id)),
        freshUntil: now + deciders_fresh_ms,
      }
    }
    if (this.deciders.partners.size === 0) return false
    const partner = this.cardPartners.get(cardId)
    return partner === undefined || this.deciders.partners.has(partner)
  }

  private remember(cardId: string, partnerId: string): void {
    if (this.cardPartners.size >= card_partners_max) {
      this.cardPartners.delete(this.cardPartners.keys().next().value!)
    }
    this.cardPartners.set(cardId, partnerId)
  }

  /**
   * When the card's partner serves decisions: the card, the subject and stand-in, and the
   * account's available balance, in one read; undefined when the partner serves none.
   */
  async contextOf(cardId: string): Promise<DecisionContext | undefined> {
    if (!(await this.mayDecide(cardId))) return undefined
    const row = await this.db
      .selectFrom('cards')
      .leftJoin('card_decision_settings as s', 's.partner_id', 'cards.partner_id')
      .innerJoin('accounts as a', 'a.id', 'cards.account_id')
      .selectAll('cards')
      .select(['s.subject', 's.stand_in', 'a.balance', 'a.held'])
      .where('cards.id', '=', cardId)
      .executeTakeFirst()
    if (row) this.remember(cardId, row.partner_id)
    if (!row?.subject || !row.stand_in) return undefined
    const { subject, stand_in, balance, held, ...card } = row
    return { card, settings: { subject, stand_in }, available: BigInt(balance) - BigInt(held) }
  }

  async ask(
    card: CardRow,
    r: AuthorizeRequest,
    settings: { subject: string; stand_in: 'approve' | 'decline' },
  ): Promise<PartnerAnswer> {
    const standIn = {
      approve: settings.stand_in === 'approve',
      reason: 'the partner did not answer in time',
    }
    const { pin: _pin, ...network } = r
    const payload = JSON.stringify({
      card: {
        id: card.id,
        account_id: card.account_id,
        user_id: card.holder_user_id,
        last_4: card.last_4,
      },
      authorization: network,
    })
    try {
      const reply = await this.send(card.partner_id, settings.subject, payload, decision_timeout_ms)
      const parsed = answer.safeParse(JSON.parse(reply))
      return parsed.success ? parsed.data : standIn
    } catch {
      return standIn
    }
  }
}
