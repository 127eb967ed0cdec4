import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { currentCommitHook, type CommitHook } from '../db/commit-hooks.ts'
import { isDatabaseUnavailable } from '../db/errors.ts'
import { NotFound, Unavailable } from '../errors.ts'
import { appendEvents, type NewEvent } from '../events/event-outbox.ts'
import { holdCardPayment } from '../ledger/card-journals.ts'
import {
  GroupCommitter,
  isRetryableDatabaseError,
  type BatchOutcome,
} from '../ledger/group-committer.ts'
import { LedgerBatch } from '../ledger/ledger-batch.ts'
import { newRowId } from '../ledger/row-id.ts'
import type { Database } from '../schema.ts'
import type { AuthorizationView, AuthorizeRequest } from './card-contract.ts'
import { nothingSpent, spendOf, verdictOf, type Spend } from './card-checks.ts'
import type { CardRow, CardService } from './card-service.ts'
import type { PartnerAnswer } from './card-decisions.ts'
import { authorizationView, newAuthorization, type AuthorizationRow } from './card-views.ts'

// Authorizations are decided in groups, as payments are written (ledger/group-committer.ts):
// those that arrive while a group is being written go together in the next one, in one
// database transaction. A group locks its cards in id order, reads the spending of those
// with window limits at once, locks their accounts (LedgerBatch) and decides each
// authorization in its turn against the state the ones before it left: two authorizations
// of one card, in one group or two, never pass its limits together, and the account's
// balance is held once for all of them. Then one write each for the holds and rows, the
// authorizations and their events, and one commit.

export interface AuthorizationJob {
  r: AuthorizeRequest
  /** The credential that sent it (the network's, in the sandbox an operator's). */
  addedBy: string
  /** The partner's own answer, when it decides (card-decisions.ts). */
  partner: PartnerAnswer | undefined
  /** The caller's commit hook (an operator's audit row): told the ids the authorization made. */
  hook?: CommitHook | undefined
}

export interface AuthorizationDeskSettings {
  batch_jobs_max: number
  batches_in_flight_max: number
  queue_jobs_max: number
  attempts_max: number
}

export const authorization_desk_defaults: AuthorizationDeskSettings = {
  batch_jobs_max: 128,
  batches_in_flight_max: 4,
  queue_jobs_max: 10_000,
  attempts_max: 5,
}

export class AuthorizationDesk {
  private readonly desk: GroupCommitter<AuthorizationJob, AuthorizationView>

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly pinKey: Buffer,
    private readonly cards: CardService,
    private readonly forget: (accountIds: string[]) => void,
    settings: AuthorizationDeskSettings = authorization_desk_defaults,
  ) {
    this.desk = new GroupCommitter((jobs) => this.decide(jobs), {
      ...settings,
      overloaded: () => new Unavailable('too many card authorizations are waiting; try again'),
      retryable: isRetryableDatabaseError,
      isolatable: (error) => !isDatabaseUnavailable(error),
      // A card's authorizations go in one group at a time; a busy card's pile into the next.
      keysOf: (job) => [job.r.card_id],
    })
  }

  submit(job: AuthorizationJob): Promise<AuthorizationView> {
    return this.desk.submit({ ...job, hook: currentCommitHook() })
  }

  private async decide(jobs: AuthorizationJob[]): Promise<BatchOutcome<AuthorizationView>[]> {
    let accounts: string[] = []
    try {
      return await this.db.transaction().execute(async (trx) => {
        const now = this.clock.now()
        const ids = [...new Set(jobs.map((job) => job.r.card_id))].sort()
        const cards = new Map(
          (
            await trx
              .selectFrom('cards')
              .selectAll()
              .where('id', 'in', ids)
              .orderBy('id')
              .forUpdate()
              .execute()
          ).map((card) => [card.id, card]),
        )
        const spends = await spendOf(trx, [...cards.values()], now)
        accounts = [...new Set([...cards.values()].map((card) => card.account_id))]
        const batch = await LedgerBatch.open(trx, this.clock, accounts)
        const group = new Group(cards, spends, this.pinKey, now)
        const outcomes = jobs.map((job) => group.take(batch, job))
        await batch.flush()
        await this.write(trx, group, now)
        return outcomes
      })
    } finally {
      if (accounts.length > 0) this.forget(accounts)
    }
  }

  private async write(trx: Kysely<Database>, group: Group, now: Date): Promise<void> {
    if (group.rows.length > 0)
      await trx.insertInto('card_authorizations').values(group.rows).execute()
    for (const card of group.changed.values()) {
      const before = group.before.get(card.id)!
      if (card.wrong_pins !== before.wrong_pins) {
        await trx
          .updateTable('cards')
          .set({ wrong_pins: card.wrong_pins })
          .where('id', '=', card.id)
          .execute()
      }
      // An auto-lock time that has passed freezes the card now, for good (until unfrozen).
      if (card.status !== before.status) await this.cards.setStatus(trx, before, card.status, now)
    }
    if (group.events.length > 0) await appendEvents(trx, group.events)
  }
}

/** One group's decisions, each against the state the ones before it left. */
class Group {
  readonly rows: AuthorizationRow[] = []
  readonly events: NewEvent[] = []
  /** Cards whose wrong PINs or status changed, as they now are; `before` as they were. */
  readonly changed = new Map<string, CardRow>()
  readonly before = new Map<string, CardRow>()

  constructor(
    private readonly cards: Map<string, CardRow>,
    private readonly spends: Map<string, Spend>,
    private readonly pinKey: Buffer,
    private readonly now: Date,
  ) {}

  take(batch: LedgerBatch, job: AuthorizationJob): BatchOutcome<AuthorizationView> {
    const { r } = job
    const card = this.cards.get(r.card_id)
    if (!card) return { ok: false, error: new NotFound('card') }
    const amount = BigInt(r.amount)
    const spend = this.spends.get(card.id) ?? nothingSpent()
    const verdict = verdictOf(card, r, amount, amount, spend, this.now, this.pinKey)
    this.change(card, verdict.wrongPins, verdict.freeze)
    let reason = verdict.reason
    const partnerDeclined = !reason && job.partner !== undefined && !job.partner.approve
    if (partnerDeclined) reason = 'partner_declined'
    const message = partnerDeclined ? (job.partner?.reason ?? null) : null
    const row = newAuthorization(card, r, this.now, reason ?? null, message)
    if (!reason) {
      const txId = newRowId()
      const payment = {
        accountId: card.account_id,
        merchantName: r.merchant_name,
        last4: card.last_4,
        userId: card.holder_user_id,
      }
      if (holdCardPayment(batch, { ...payment, txId, amount, addedBy: job.addedBy })) {
        Object.assign(row, { tx_id: txId, status: 'pending', held: amount })
        spend.day += amount
        spend.month += amount
        spend.year += amount
        this.spends.set(card.id, spend)
      } else {
        row.decline_reason = 'insufficient_funds'
      }
    }
    this.rows.push(row)
    job.hook?.note(row.tx_id ? [row.id, row.tx_id] : [row.id])
    const view = authorizationView(row)
    const type = view.approved ? 'card.authorization.approved' : 'card.authorization.declined'
    this.events.push({
      type,
      partner_id: card.partner_id,
      resource_id: row.id,
      data: view,
      occurred_at: this.now,
    })
    return { ok: true, value: view }
  }

  private change(card: CardRow, wrongPins: number, freeze: boolean): void {
    if (wrongPins === card.wrong_pins && !freeze) return
    if (!this.before.has(card.id)) this.before.set(card.id, { ...card })
    card.wrong_pins = wrongPins
    if (freeze) card.status = 'frozen'
    this.changed.set(card.id, card)
  }
}
