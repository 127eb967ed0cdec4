import { sql, type Kysely, type RawBuilder } from 'kysely'
import { toSast } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import { currentCommitHook, type CommitHook } from '../db/commit-hooks.ts'
import { isDatabaseUnavailable } from '../db/errors.ts'
import { NotFound, Unavailable } from '../errors.ts'
import { insertUnnestStatement, type PgType } from '../db/speed/arrays.ts'
import { appendEvents, appendEventsQueries, type NewEvent } from '../events/event-outbox.ts'
import { holdCardPayment } from '../ledger/card-journals.ts'
import {
  GroupCommitter,
  isRetryableDatabaseError,
  type BatchOutcome,
} from '../ledger/group-committer.ts'
import type { KnownAccounts } from '../ledger/known-accounts.ts'
import { GuardFailed, LedgerBatch, StaleAccounts } from '../ledger/ledger-batch.ts'
import { newRowId } from '../ledger/row-id.ts'
import type { Database } from '../schema.ts'
import type { AuthorizationView, AuthorizeRequest } from './card-contract.ts'
import { nothingSpent, spendOf, verdictOf, windowLimited, type Spend } from './card-checks.ts'
import { CardMemory, cardVersionGuard, lockCards, type RememberedCard } from './card-memory.ts'
import { nextVersion, type CardRow, type CardService } from './card-service.ts'
import type { PartnerAnswer } from './card-decisions.ts'
import { authorizationView, newAuthorization, type AuthorizationRow } from './card-views.ts'

// Authorizations are decided in groups, as payments are written (ledger/group-committer.ts):
// those that arrive while a group is being written go together in the next one, in one
// database transaction. A group locks its cards in id order, reads the spending of those
// with window limits at once, locks their accounts (LedgerBatch) and decides each
// authorization in its turn against the state the ones before it left: two authorizations
// of one card, in one group or two, never pass its limits together, and the account's
// balance is held once for all of them. Then one write each for the holds and rows, the
// authorizations and their events, and one commit. A group whose cards and accounts this
// instance remembers (card-memory.ts, ledger/known-accounts.ts) reads and locks nothing
// first: it is decided on those copies and written in one statement that checks them, its
// commit sent with it; a stale copy sends it back to the way above.

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
  /** Authorizations that must wait before a group starts beside one being written. */
  overlap_jobs_min?: number
}

export const authorization_desk_defaults: AuthorizationDeskSettings = {
  batch_jobs_max: 128,
  batches_in_flight_max: 4,
  queue_jobs_max: 10_000,
  attempts_max: 5,
  // A second group starts beside one being written only once this many wait, as payment
  // batches do (BANK_LEDGER_OVERLAP_JOBS_MIN): spread over 1,000 cards, starting it with
  // whatever waited made groups of about 15, and 32 doubled the rate (docs/performance.md).
  overlap_jobs_min: 32,
}

/** How a group read its cards and accounts (stale: remembered, found changed, decided again). */
export type GroupStart = 'remembered' | 'locked' | 'stale'

export class AuthorizationDesk {
  private readonly desk: GroupCommitter<AuthorizationJob, AuthorizationView>
  /** Groups so far by how they started (tests, and the metrics through `observe`). */
  readonly starts: Record<GroupStart, number> = { remembered: 0, locked: 0, stale: 0 }
  /**
   * Accounts that groups of this desk decided under lock are writing now, and how many such
   * groups each has seen start. A group from memory is not started on an account one of
   * them writes (it would find the account changed); one that finds it changed all the same
   * after such a group started raced this desk, not another writer, and pauses nothing.
   */
  private readonly lockedWriting = new Map<string, number>()
  private readonly lockedStarts = new Map<string, number>()

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly pinKey: Buffer,
    private readonly cards: CardService,
    private readonly known: KnownAccounts,
    private readonly observe?: ((start: GroupStart) => void) | undefined,
    private readonly memory: CardMemory = new CardMemory(),
    settings: AuthorizationDeskSettings = authorization_desk_defaults,
  ) {
    this.desk = new GroupCommitter((jobs) => this.decide(jobs), {
      ...settings,
      overloaded: () => new Unavailable('too many card authorizations are waiting; try again'),
      retryable: isRetryableDatabaseError,
      isolatable: (error) => !isDatabaseUnavailable(error),
      // A card's authorizations go in one group at a time; a busy card's pile into the next.
      // So do a remembered card's account's: a group decided from memory expects the account
      // as the last group left it, which a group written beside it would change.
      keysOf: (job) => {
        const account = this.memory.accountOf(job.r.card_id)
        return account ? [job.r.card_id, account] : [job.r.card_id]
      },
    })
  }

  private started(start: GroupStart): void {
    this.starts[start]++
    this.observe?.(start)
  }

  submit(job: AuthorizationJob): Promise<AuthorizationView> {
    return this.desk.submit({ ...job, hook: currentCommitHook() })
  }

  /** From memory when every card and account is remembered; else (or if stale) locked and read. */
  private async decide(jobs: AuthorizationJob[]): Promise<BatchOutcome<AuthorizationView>[]> {
    try {
      const outcomes = await this.decideRemembered(jobs)
      if (outcomes) return outcomes
    } catch (error) {
      if (!(error instanceof GuardFailed)) throw error
      // A card or an account changed elsewhere: decided again, locked and read.
      this.started('stale')
    }
    return this.decideLocked(jobs)
  }

  /**
   * The group decided on remembered cards and accounts and written in one statement (with
   * its commit when no caller's hook must write first), which checks that each card's version
   * and each account are still as remembered; undefined, with nothing sent, when one is not
   * remembered or a decision would change a card (a wrong PIN, an auto-lock): those groups
   * lock their cards. Rejects with GuardFailed (StaleAccounts) when the check fails.
   */
  private async decideRemembered(
    jobs: AuthorizationJob[],
  ): Promise<BatchOutcome<AuthorizationView>[] | undefined> {
    const ids = [...new Set(jobs.map((job) => job.r.card_id))].sort()
    if (ids.some((id) => this.memory.accountOf(id) === undefined)) return undefined
    let planned: { group: Group; batch: LedgerBatch; cards: CardRow[]; now: Date } | undefined
    let outcomes: BatchOutcome<AuthorizationView>[] = []
    let seen: number[] = []
    try {
      // Nothing is sent before the write (the transaction's begin goes with it, prepared.ts).
      await this.db.transaction().execute(async (trx) => {
        const now = this.clock.now()
        const remembered = this.memory.take(ids, toSast(now).date)
        // Thrown, not returned: a transaction that ends without a write must not commit, or
        // the callers' hooks (their audit rows) would commit in it with nothing to name.
        if (!remembered) throw new NotRemembered()
        const cards = [...remembered.values()].map((known) => known.card)
        const accounts = [...new Set(cards.map((card) => card.account_id))]
        if (accounts.some((id) => this.lockedWriting.has(id))) throw new NotRemembered()
        const batch = LedgerBatch.fromKnown(trx, this.clock, accounts, this.known)
        if (!batch) throw new NotRemembered()
        seen = accounts.map((id) => this.lockedStarts.get(id) ?? 0)
        const spends = new Map<string, Spend>()
        for (const [id, known] of remembered) if (known.spend) spends.set(id, known.spend)
        const group = new Group(
          new Map(cards.map((card) => [card.id, card])),
          spends,
          this.pinKey,
          now,
        )
        outcomes = jobs.map((job) => group.take(batch, job))
        if (group.changed.size > 0) throw new NotRemembered()
        planned = { group, batch, cards: cards.map((card) => ({ ...card })), now }
        this.started('remembered')
        const guard = cardVersionGuard(cards)
        await batch.flush(
          { queries: [guard.query, ...group.writeQueries()], holds: guard.holds },
          { commit: true },
        )
        group.noteTargets()
      })
    } catch (error) {
      if (error instanceof NotRemembered) return undefined
      this.forgetTried(ids, planned, error, seen)
      throw error
    }
    const { group, batch, cards, now } = planned!
    this.known.guessed(false)
    this.known.remember(batch.accountStates())
    for (const card of cards) card.version = String(BigInt(card.version) + 1n)
    this.memory.remember(group.remembered(cards, now))
    return outcomes
  }

  /** A group tried from memory failed: its cards and accounts are not guessed again now. */
  private forgetTried(
    ids: string[],
    planned: { batch: LedgerBatch; cards: CardRow[] } | undefined,
    error: unknown,
    seen: number[],
  ) {
    const accounts = [...new Set((planned?.cards ?? []).map((card) => card.account_id))]
    this.known.forget(accounts)
    this.memory.forget(ids)
    if (!planned?.batch.guessed) return
    // A group of this desk locked one of the accounts meanwhile: its own race, not a writer
    // elsewhere, so nothing is paused or counted against guessing (as payment batches).
    const ours = accounts.some((id, i) => (this.lockedStarts.get(id) ?? 0) !== seen[i])
    if (ours) return
    if (error instanceof StaleAccounts) this.known.pause(accounts)
    this.known.guessed(error instanceof StaleAccounts)
  }

  private async decideLocked(jobs: AuthorizationJob[]): Promise<BatchOutcome<AuthorizationView>[]> {
    let accounts: string[] = []
    let cardIds: string[] = []
    let done: { batch: LedgerBatch; group: Group; cards: CardRow[]; now: Date } | undefined
    try {
      this.started('locked')
      const outcomes = await this.db.transaction().execute(async (trx) => {
        const now = this.clock.now()
        cardIds = [...new Set(jobs.map((job) => job.r.card_id))].sort()
        const locked = await lockCards(trx, cardIds)
        const cards = new Map(locked.map((card) => [card.id, card]))
        const spends = await spendOf(trx, locked, now)
        accounts = [...new Set(locked.map((card) => card.account_id))]
        this.writingLocked(accounts, +1)
        const batch = await LedgerBatch.open(trx, this.clock, accounts)
        const before = locked.map((card) => ({ ...card }))
        const group = new Group(cards, spends, this.pinKey, now)
        const outcomes = jobs.map((job) => group.take(batch, job))
        await batch.flush()
        await this.write(trx, group, now)
        group.noteTargets()
        done = { batch, group, cards: before, now }
        return outcomes
      })
      const { batch, group, cards, now } = done!
      this.known.remember(batch.accountStates())
      // A card whose status or wrong PINs changed was written again: not remembered.
      const kept = cards.filter((card) => !group.changed.has(card.id))
      this.memory.forget(group.changed.keys())
      this.memory.remember(group.remembered(kept, now))
      return outcomes
    } catch (error) {
      if (accounts.length > 0) this.known.forget(accounts)
      this.memory.forget(cardIds)
      throw error
    } finally {
      this.writingLocked(accounts, -1)
    }
  }

  private writingLocked(accounts: readonly string[], change: 1 | -1): void {
    for (const id of accounts) {
      const now = (this.lockedWriting.get(id) ?? 0) + change
      if (now > 0) this.lockedWriting.set(id, now)
      else this.lockedWriting.delete(id)
      if (change > 0) this.lockedStarts.set(id, (this.lockedStarts.get(id) ?? 0) + 1)
    }
    // Bounded: counts of accounts no group writes now are only compared while one is tried.
    if (this.lockedStarts.size > 10_000 && this.lockedWriting.size === 0) this.lockedStarts.clear()
  }

  private async write(trx: Kysely<Database>, group: Group, now: Date): Promise<void> {
    if (group.rows.length > 0)
      await trx.insertInto('card_authorizations').values(group.rows).execute()
    for (const card of group.changed.values()) {
      const before = group.before.get(card.id)!
      if (card.wrong_pins !== before.wrong_pins) {
        await trx
          .updateTable('cards')
          .set({ wrong_pins: card.wrong_pins, version: nextVersion })
          .where('id', '=', card.id)
          .execute()
      }
      // An auto-lock time that has passed freezes the card now, for good (until unfrozen).
      if (card.status !== before.status) await this.cards.setStatus(trx, before, card.status, now)
    }
    if (group.events.length > 0) await appendEvents(trx, group.events)
  }
}

/** A group that cannot be decided from memory (nothing was sent). */
class NotRemembered extends Error {}

const authorization_columns: Array<[keyof AuthorizationRow & string, PgType]> = [
  ['id', 'uuid'],
  ['partner_id', 'uuid'],
  ['card_id', 'uuid'],
  ['account_id', 'uuid'],
  ['tx_id', 'uuid'],
  ['status', 'text'],
  ['decline_reason', 'text'],
  ['decline_message', 'text'],
  ['amount', 'bigint'],
  ['held', 'bigint'],
  ['reversed', 'bigint'],
  ['cleared', 'bigint'],
  ['merchant_name', 'text'],
  ['mcc', 'text'],
  ['merchant_country', 'text'],
  ['channel', 'text'],
  ['entry_mode', 'text'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
]

/** One group's decisions, each against the state the ones before it left. */
class Group {
  readonly rows: AuthorizationRow[] = []
  readonly events: NewEvent[] = []
  /** Cards whose wrong PINs or status changed, as they now are; `before` as they were. */
  readonly changed = new Map<string, CardRow>()
  readonly before = new Map<string, CardRow>()
  /** What each caller's commit hook is told once the group's writes are made. */
  private readonly notes: Array<[CommitHook, string[]]> = []

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
    if (job.hook) this.notes.push([job.hook, row.tx_id ? [row.id, row.tx_id] : [row.id]])
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

  /** The callers' hooks told what their authorizations made (after the group's writes). */
  noteTargets(): void {
    for (const [hook, ids] of this.notes) hook.note(ids)
  }

  /** The authorization rows and events as WITH queries of the group's one write. */
  writeQueries(): RawBuilder<unknown>[] {
    const queries = appendEventsQueries(this.events)
    if (this.rows.length === 0) return queries
    const rows = sql`authorized as (${insertUnnestStatement('card_authorizations', this.rows, authorization_columns)})`
    return [rows, ...queries]
  }

  /** The cards as this group leaves them, with what those with window limits have spent. */
  remembered(cards: readonly CardRow[], now: Date): RememberedCard[] {
    const day = toSast(now).date
    return cards.map((card) => ({
      card,
      spend: windowLimited(card) ? (this.spends.get(card.id) ?? nothingSpent()) : undefined,
      day,
    }))
  }

  private change(card: CardRow, wrongPins: number, freeze: boolean): void {
    if (wrongPins === card.wrong_pins && !freeze) return
    if (!this.before.has(card.id)) this.before.set(card.id, { ...card })
    card.wrong_pins = wrongPins
    if (freeze) card.status = 'frozen'
    this.changed.set(card.id, card)
  }
}
