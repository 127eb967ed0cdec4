import { sql, type Kysely, type RawBuilder } from 'kysely'
import { toSast } from '../calendar/sa-calendar.ts'
import type { CommitHook } from '../db/commit-hooks.ts'
import { assert, NotFound, Unavailable } from '../errors.ts'
import { insertUnnestStatement, type PgType } from '../db/speed/arrays.ts'
import { appendEventsQueries, type NewEvent } from '../events/event-outbox.ts'
import { holdCardPayment } from '../ledger/card-journals.ts'
import type { AccountStatus, Journal } from '../ledger/journal.ts'
import type { DeskSettings, OwnRows, PaymentKind } from '../ledger/ledger-writer.ts'
import { newRowId } from '../ledger/row-id.ts'
import type { Database } from '../schema.ts'
import type { AuthorizationView, AuthorizeRequest, DeclineReason } from './card-contract.ts'
import {
  nothingSpent,
  spendOf,
  verdictOf,
  windowLimited,
  type Spend,
  type Verdict,
} from './card-checks.ts'
import { CardMemory, cardVersionGuard, lockCards, type RememberedCard } from './card-memory.ts'
import {
  effectiveStatus,
  nextVersion,
  type CardRow,
  type CardService,
} from './card-service.ts'
import type { PartnerAnswer } from './card-decisions.ts'
import { authorizationView, newAuthorization, type AuthorizationRow } from './card-views.ts'

// Card authorizations are a kind of payment of the ledger writer (ledger/ledger-writer.ts):
// its desk gathers those that arrive while a batch is being written into the next one, one
// database transaction for many, as it does transfers. What this file says is what a batch
// decides on beside its accounts (the writer's OwnRows): the cards, with what those with
// window limits have spent. A batch starts from what this instance remembers of its cards
// (card-memory.ts) and accounts when it has them all: nothing is read or locked first, and
// its one write checks that each card's version is still the one remembered. Else it locks
// its cards in id order (raising their versions) and reads their spending, then the writer
// locks their accounts. Each authorization is decided in its turn against the state the ones
// before it left: two authorizations of one card, in one batch or two, never pass its limits
// together, and the account's balance is held once for all of them. The authorization rows
// and their events go in the batch's one write; a card whose wrong PINs or status changed is
// written after it.

export interface AuthorizationJob {
  r: AuthorizeRequest
  /** The credential that sent it (the network's, in the sandbox an operator's). */
  addedBy: string
  /** The partner's own answer, when it decides (card-decisions.ts). */
  partner: PartnerAnswer | undefined
  /** The bank's checks as made before the partner was asked (outside the locks). */
  checked?: CheckedCard | undefined
  /** The caller's commit hook (an operator's audit row): told the ids the authorization made. */
  hook?: CommitHook | undefined
}

/**
 * The verdict of the bank's checks on a card as it was when they were made (card-network.ts
 * makes them before asking the partner): its version, the SAST day whose windows its
 * spending counted, and its status then.
 */
export interface CheckedCard {
  version: string
  day: string
  status: CardRow['status']
  verdict: Verdict
}

/** The desk's name: the writer's metrics and probes label its batches with it. */
export const card_authorization_desk = 'card.authorization'

export const authorization_desk_defaults: DeskSettings = {
  batch_jobs_max: 128,
  batches_in_flight_max: 4,
  queue_jobs_max: 10_000,
  attempts_max: 5,
  // A second batch starts beside one being written only once this many wait, as payment
  // batches do (BANK_LEDGER_OVERLAP_JOBS_MIN): spread over 1,000 cards, starting it with
  // whatever waited made batches of about 15, and 32 doubled the rate (docs/performance.md).
  overlap_jobs_min: 32,
  overloaded: () => new Unavailable('too many card authorizations are waiting; try again'),
}

/** What the kind needs: the PIN key, the cards' status changes, and this instance's memory. */
export interface AuthorizationDeps {
  pinKey: Buffer
  cards: CardService
  memory: CardMemory
}

type Trx = Kysely<Database>

/** Card authorizations as the ledger writer takes them. */
export function authorizationKind(
  deps: AuthorizationDeps,
): PaymentKind<AuthorizationJob, AuthorizationView, Trx, Group> {
  return {
    name: card_authorization_desk,
    // Known before the card is read only when it is remembered: its desk then groups the
    // card's authorizations with its account's.
    accountsOf: (job) => {
      const account = deps.memory.accountOf(job.r.card_id)
      return account ? [account] : []
    },
    rows: cardRows(deps),
    refusal: (_batch, job, group) => (group.has(job.r.card_id) ? undefined : new NotFound('card')),
    take: (batch, job, group) => group.take(batch, job),
  }
}

function cardIds(jobs: AuthorizationJob[]): string[] {
  return [...new Set(jobs.map((job) => job.r.card_id))].sort()
}

/** The cards of a batch, remembered or locked, and what becomes of them. */
type CardRows = OwnRows<AuthorizationJob, Group, Trx>

function cardRows({ pinKey, cards, memory }: AuthorizationDeps): CardRows {
  return {
    idsOf: (job) => [job.r.card_id],
    remembered(jobs, now) {
      const remembered = memory.take(cardIds(jobs), toSast(now).date)
      if (!remembered) return undefined
      const spends = new Map<string, Spend>()
      for (const [id, known] of remembered) if (known.spend) spends.set(id, known.spend)
      return new Group([...remembered.values()].map((known) => known.card), spends, pinKey, now)
    },
    async lock(trx, jobs, now) {
      const locked = await lockCards(trx, cardIds(jobs))
      return new Group(locked, await spendOf(trx, locked, now), pinKey, now)
    },
    accountsOf: (group) => group.accounts(),
    write(group, remembered) {
      const queries = group.writeQueries()
      if (!remembered) return { queries }
      const guard = cardVersionGuard(group.start)
      return { queries: [guard.query, ...queries], holds: guard.holds }
    },
    after: (group) => {
      if (group.changed.size === 0) return undefined
      return (trx) => writeChanged(trx, cards, group)
    },
    written: (group) => group.noteTargets(),
    committed(group, remembered) {
      // The write raises each card's version by one where it was remembered (the locked ones
      // were raised by their lock); a card whose status or wrong PINs changed is written
      // again, so it is not remembered. Called as the write goes out (a batch of the account
      // may start behind it from this state) and again once it commits.
      const kept = group.start.filter((card) => !group.changed.has(card.id))
      const left = remembered ? kept.map((card) => ({ ...card, version: nextOf(card) })) : kept
      memory.forget(group.changed.keys())
      memory.remember(group.remembered(left))
    },
    failed: (jobs) => memory.forget(cardIds(jobs)),
  }
}

const nextOf = (card: CardRow) => String(BigInt(card.version) + 1n)

/** The cards whose wrong PINs or status a batch changed, written after its one write. */
async function writeChanged(trx: Trx, cards: CardService, group: Group): Promise<void> {
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
    if (card.status !== before.status) await cards.setStatus(trx, before, card.status, group.now)
  }
}

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

/** One batch's cards and decisions, each against the state the ones before it left. */
export class Group {
  readonly rows: AuthorizationRow[] = []
  readonly events: NewEvent[] = []
  /** Cards whose wrong PINs or status changed, as they now are; `before` as they were. */
  readonly changed = new Map<string, CardRow>()
  readonly before = new Map<string, CardRow>()
  /** The cards as the batch found them (copies), to remember once it commits. */
  readonly start: CardRow[]
  /** Cards an authorization of this batch was decided on already. */
  private readonly decided = new Set<string>()
  private readonly cards: Map<string, CardRow>
  /** What each caller's commit hook is told once the batch's writes are made. */
  private readonly notes: Array<[CommitHook, string[]]> = []

  constructor(
    cards: readonly CardRow[],
    private readonly spends: Map<string, Spend>,
    private readonly pinKey: Buffer,
    readonly now: Date,
  ) {
    this.cards = new Map(cards.map((card) => [card.id, card]))
    this.start = cards.map((card) => ({ ...card }))
  }

  has(cardId: string): boolean {
    return this.cards.has(cardId)
  }

  /** The verdict made before, when the card is as it was then; else undefined. */
  private unchangedSince(card: CardRow, checked: CheckedCard | undefined): Verdict | undefined {
    if (!checked || this.decided.has(card.id) || checked.version !== String(card.version)) {
      return undefined
    }
    const sameDay = checked.day === toSast(this.now).date
    const sameStatus = effectiveStatus(card, this.now) === checked.status
    return sameDay && sameStatus ? checked.verdict : undefined
  }

  /** The accounts of its cards. */
  accounts(): string[] {
    return [...new Set([...this.cards.values()].map((card) => card.account_id))]
  }

  take(batch: Journal, job: AuthorizationJob): AuthorizationView {
    const { r } = job
    const card = this.cards.get(r.card_id)!
    const amount = BigInt(r.amount)
    const spend = this.spends.get(card.id) ?? nothingSpent()
    // Checked once: the checks made before the partner was asked decide, unless the card or
    // what it spent changed since (its version, an earlier authorization of this batch, the
    // day's windows, or a status reached by time: an auto-lock, an expiry).
    const verdict =
      this.unchangedSince(card, job.checked) ??
      verdictOf(card, r, amount, amount, spend, this.now, this.pinKey)
    this.decided.add(card.id)
    this.change(card, verdict.wrongPins, verdict.freeze)
    // The account's status, under its lock: frozen, blocked or dormant accounts take no new
    // debits (account_frozen), a closed one none ever (account_closed).
    let reason = verdict.reason ?? accountDecline(batch.account(card.account_id).status)
    const partnerDeclined = !reason && job.partner !== undefined && !job.partner.approve
    if (partnerDeclined) reason = 'partner_declined'
    const message = partnerDeclined ? (job.partner?.reason ?? null) : null
    const row = newAuthorization(card, r, this.now, reason ?? null, message)
    if (!reason) this.hold(batch, job, card, row, spend)
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
    return view
  }

  /**
   * Holds an approved authorization's amount, or declines it for funds. Asserted before and
   * after, as the ledger asserts its journals: an approval holds exactly its amount and adds
   * it to each of the card's windows; a decline holds nothing.
   */
  private hold(
    batch: Journal,
    job: AuthorizationJob,
    card: CardRow,
    row: AuthorizationRow,
    spend: Spend,
  ): void {
    const amount = BigInt(job.r.amount)
    assert(amount > 0n, 'an authorization is of a positive amount')
    const available = batch.available(card.account_id)
    const txId = newRowId()
    // One object literal with every field: a spread copy with fields added after it is left
    // in V8's slow shape, which cost about 9 µs of CPU an authorization.
    const payment = {
      accountId: card.account_id,
      txId,
      merchantName: job.r.merchant_name,
      last4: card.last_4,
      userId: card.holder_user_id,
      amount,
      addedBy: job.addedBy,
    }
    if (!holdCardPayment(batch, payment)) {
      const unchanged = batch.available(card.account_id) === available
      assert(unchanged, 'a declined authorization holds nothing')
      row.decline_reason = 'insufficient_funds'
      return
    }
    assert(batch.available(card.account_id) === available - amount,
      'an approved authorization holds exactly its amount')
    row.tx_id = txId
    row.status = 'pending'
    row.held = amount
    const spent = {
      day: spend.day + amount,
      month: spend.month + amount,
      year: spend.year + amount,
    }
    const nested = spent.day <= spent.month && spent.month <= spent.year
    assert(nested, 'what a day spent is within its month and its year')
    this.spends.set(card.id, spent)
  }

  /** The callers' hooks told what their authorizations made (after the batch's write). */
  noteTargets(): void {
    for (const [hook, ids] of this.notes) hook.note(ids)
  }

  /** The authorization rows and events as WITH queries of the batch's one write. */
  writeQueries(): RawBuilder<unknown>[] {
    const queries = appendEventsQueries(this.events)
    if (this.rows.length === 0) return queries
    const rows = sql`authorized as (${insertUnnestStatement('card_authorizations', this.rows, authorization_columns)})`
    return [rows, ...queries]
  }

  /** The cards as this batch leaves them, with what those with window limits have spent. */
  remembered(cards: readonly CardRow[]): RememberedCard[] {
    const day = toSast(this.now).date
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

/** Why an account's status declines an authorization; undefined when it is active. */
function accountDecline(status: AccountStatus): DeclineReason | undefined {
  if (status === 'active') return undefined
  return status === 'closed' ? 'account_closed' : 'account_frozen'
}
