import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import { bankNow, type Clock } from '../clock.ts'
import { decodeSeqCursor, invalid_cursor_message, seqPage } from '../contract/cursor.ts'
import { formatTimestamp } from '../contract/format.ts'
import { Invalid, InvalidState, NotFound, ScreeningHeld } from '../errors.ts'
import type { Database } from '../schema.ts'
import type { ScreeningHit, ScreeningService } from './screening-service.ts'
import type { ReviewCause, ReviewStatus, ReviewSubject, Screened,
  ScreeningReviewsTable } from './screening-tables.ts'

// Screening reviews (RULINGS "Financial crime controls"): a customer's name (an entity's, a
// user's) or a payment's counterparty screened at or above the review score is held in a
// review until an operator decides it. The review is written in the transaction that writes
// what was screened (the entity, the user, the payment), so nothing screened is ever stored
// without its review. An entity is *held* while a review of it or of one of its users is
// undecided (`open`, `clear_pending`), or any review naming it (a payment's too) is
// `confirmed`: no account opens for it (accounts' `open` asks `heldStatus`), and what
// listens to the reviews (the account-status module) freezes its accounts while it is held
// and lifts that freeze when the last review is cleared. A payment's undecided review holds
// that payment only (transfers', bulk's and incoming's listeners). Clearing a review whose best
// score is at or above the confirm score takes two operators: the first asks
// (`clear_pending`), another clears. A hit on an entry an operator has cleared for the same
// subject before does not open a review again (a re-screening, an update that leaves the
// name as it was).

export type ReviewRow = Selectable<ScreeningReviewsTable>
export type HeldStatus = 'review' | 'confirmed'
export type ScreeningStatus = 'clear' | HeldStatus

/** What is screened of a subject, and what to hold if it hits. */
export interface ScreeningSubject {
  partnerId: string
  entityId: string
  subject: ReviewSubject
  subjectId: string
  cause: ReviewCause
  /** The names to screen (a business's name and its trading name): their hits are merged. */
  screened: Screened[]
}

/** A subject screened, with its hits, to hold in the transaction that writes it. */
export interface CheckedSubject {
  subject: ScreeningSubject
  hits: ScreeningHit[]
}

/** A review's change of status, as listeners hear of it in the changing transaction. */
export interface ReviewChange {
  review: ReviewRow
  /** `open` for a new review (or new hits on one still undecided). */
  to: ReviewStatus
}

export type ReviewListener = (trx: Kysely<Database>, change: ReviewChange) => Promise<void>

export interface ReviewView {
  id: string
  partner_id: string
  entity_id: string
  subject: ReviewSubject
  subject_id: string
  cause: ReviewCause
  screened: Screened[]
  hits: ScreeningHit[]
  top_score: number
  status: ReviewStatus
  needs_second_operator: boolean
  opened_at: string
  clear_requested_by: string | null
  decided_by: string | null
  decided_at: string | null
  reason: string | null
}

const cursor_tag = 'sr'
const undecided: readonly ReviewStatus[] = ['open', 'clear_pending']

export class ScreeningReviews {
  private readonly listeners: ReviewListener[] = []

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly screening: ScreeningService,
  ) {}

  /**
   * Hears every change of a review, in its transaction (a failure undoes the change).
   * `first` puts the listener before those already there: one that must take a lock of its
   * own before any account's (a bulk batch's row) hears the change before the listeners that
   * lock accounts (a freeze).
   */
  listen(listener: ReviewListener, options: { first?: boolean } = {}): void {
    if (options.first) this.listeners.unshift(listener)
    else this.listeners.push(listener)
  }

  /** The hits of the subject's names, best first, one per list entry. */
  async hitsOf(screened: readonly Screened[]): Promise<ScreeningHit[]> {
    const best = new Map<string, ScreeningHit>()
    const answers = await this.screening.screenAll(screened.map((one) => ({ name: one.name,
      kind: one.kind, dateOfBirth: one.date_of_birth, idNumber: one.id_number })))
    for (const hits of answers) {
      for (const hit of hits) {
        const seen = best.get(hit.entry_id)
        if (!seen || seen.score < hit.score) best.set(hit.entry_id, hit)
      }
    }
    return [...best.values()].sort((a, b) => b.score - a.score)
  }

  /**
   * Screens the subject's names against the lists. Called before the transaction that writes
   * the subject (the screening reads the lists' versions on its own connection, which a
   * single-connection store such as PGlite could not give while that transaction holds it);
   * `hold` then writes its review in that transaction.
   */
  async check(subject: ScreeningSubject): Promise<CheckedSubject> {
    return { subject, hits: await this.hitsOf(subject.screened) }
  }

  /**
   * On a hit not cleared for the subject before, holds it in a review written in the
   * caller's transaction (joining its undecided review, if it has one). Answers where the
   * subject stands: `clear`, or `review` (the review's id with it).
   */
  async hold(trx: Kysely<Database>, checked: CheckedSubject): Promise<{
      status: 'clear' } | { status: 'review'; reviewId: string }> {
    const { subject, hits } = checked
    if (hits.length === 0) return { status: 'clear' }
    const cleared = await clearedEntries(trx, subject.subjectId)
    if (hits.every((hit) => cleared.has(entryKey(hit)))) return { status: 'clear' }
    const now = bankNow(this.clock)
    const { rows: [row] } = await sql<ReviewRow & { inserted: boolean }>`
      insert into screening_reviews (id, partner_id, entity_id, subject, subject_id, cause,
        screened, hits, top_score, status, opened_at)
      values (${randomUUID()}, ${subject.partnerId}, ${subject.entityId}, ${subject.subject},
        ${subject.subjectId}, ${subject.cause}, ${JSON.stringify(subject.screened)}::jsonb,
        ${JSON.stringify(hits)}::jsonb, ${hits[0]!.score}, 'open', ${now})
      on conflict (subject, subject_id) where status in ('open', 'clear_pending')
      do update set hits = excluded.hits, screened = excluded.screened,
        top_score = excluded.top_score
      returning *, (xmax = 0) as inserted`.execute(trx)
    // Listeners hear of a new review; new hits joining an undecided one change nothing they did.
    const { inserted, ...review } = row!
    if (inserted) await this.tell(trx, { review, to: 'open' })
    return { status: 'review', reviewId: review.id }
  }

  /**
   * Whether the entity is held: a review of it or its users undecided, or any review naming
   * it confirmed (a payment's too). A payment's undecided review holds that payment only.
   */
  async heldStatus(db: Kysely<Database>, entityId: string): Promise<HeldStatus | undefined> {
    const rows = await db.selectFrom('screening_reviews').select('status')
      .where('entity_id', '=', entityId).where('status', '<>', 'cleared')
      .where((eb) => eb.or([eb('subject', 'in', ['entity', 'user']),
        eb('status', '=', 'confirmed')]))
      .execute()
    if (rows.some((row) => row.status === 'confirmed')) return 'confirmed'
    return rows.length > 0 ? 'review' : undefined
  }

  /** Refuses (422 `screening_review`) while the entity is held. */
  async assertNotHeld(db: Kysely<Database>, entityId: string): Promise<void> {
    const held = await this.heldStatus(db, entityId)
    if (held) throw new ScreeningHeld(entityId, held)
  }

  /** The subjects among these (payments of one kind) whose review is undecided. */
  async undecidedOf(db: Kysely<Database>, subject: ReviewSubject,
      subjectIds: readonly string[]): Promise<Set<string>> {
    if (subjectIds.length === 0) return new Set()
    const rows = await db.selectFrom('screening_reviews').select('subject_id')
      .where('subject', '=', subject).where('subject_id', 'in', subjectIds)
      .where('status', 'in', undecided).execute()
    return new Set(rows.map((row) => row.subject_id))
  }

  /** Where a subject (entity, user, payment) stands: its latest review's status, or clear. */
  async statusOf(db: Kysely<Database>, subjectId: string): Promise<ScreeningStatus> {
    const row = await db.selectFrom('screening_reviews').select('status')
      .where('subject_id', '=', subjectId).orderBy('seq', 'desc').limit(1).executeTakeFirst()
    if (!row || row.status === 'cleared') return 'clear'
    return row.status === 'confirmed' ? 'confirmed' : 'review'
  }

  async list(request: { status?: ReviewStatus | undefined; partner_id?: string | undefined;
      entity_id?: string | undefined; limit: number; cursor?: string | undefined }):
      Promise<{ reviews: ReviewView[]; next_cursor?: string }> {
    let query = this.db.selectFrom('screening_reviews').selectAll().orderBy('seq', 'desc')
      .limit(request.limit + 1)
    if (request.status) query = query.where('status', '=', request.status)
    if (request.partner_id) query = query.where('partner_id', '=', request.partner_id)
    if (request.entity_id) query = query.where('entity_id', '=', request.entity_id)
    if (request.cursor) {
      const seq = decodeSeqCursor(cursor_tag, request.cursor)
      if (seq === undefined) throw Invalid.field('cursor', invalid_cursor_message)
      query = query.where('seq', '<', String(seq))
    }
    const { page, next_cursor } = seqPage(await query.execute(), request.limit, cursor_tag,
      (row) => row.seq)
    return { reviews: page.map((row) => this.view(row)), ...(next_cursor ? { next_cursor } : {}) }
  }

  async get(reviewId: string): Promise<ReviewView> {
    const row = await this.db.selectFrom('screening_reviews').selectAll()
      .where('id', '=', reviewId).executeTakeFirst()
    if (!row) throw new NotFound('screening review')
    return this.view(row)
  }

  /**
   * An operator's decision: `confirm` (the customer is the listed one: it stays held, its
   * accounts frozen) or `clear` (a false positive). Clearing a review scored at or above the
   * confirm score takes a second operator: the first one's clearing waits (`clear_pending`)
   * for another's. Deciding again as decided answers the review as it is.
   */
  async decide(caller: Caller, reviewId: string, decision: 'clear' | 'confirm',
      reason: string): Promise<ReviewView> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('screening_reviews').selectAll()
        .where('id', '=', reviewId).forUpdate().executeTakeFirst()
      if (!row) throw new NotFound('screening review')
      const to = this.nextStatus(row, caller, decision)
      if (to === row.status) return this.view(row)
      const now = bankNow(this.clock)
      const pending = to === 'clear_pending'
      const changed = await trx.updateTable('screening_reviews').set(pending
        ? { status: to, clear_requested_by: caller.credentialId,
          clear_requested_by_name: caller.label, reason }
        : { status: to, decided_by: caller.credentialId, decided_by_name: caller.label,
          decided_at: now, reason })
        .where('id', '=', reviewId).returningAll().executeTakeFirstOrThrow()
      await this.tell(trx, { review: changed, to })
      return this.view(changed)
    })
  }

  private nextStatus(row: ReviewRow, caller: Caller, decision: 'clear' | 'confirm'): ReviewStatus {
    const wanted = decision === 'confirm' ? 'confirmed' : 'cleared'
    if (row.status === 'cleared' || row.status === 'confirmed') {
      if (row.status === wanted) return row.status
      throw new InvalidState(`the review is ${row.status} already`, [], 409)
    }
    if (decision === 'confirm') return 'confirmed'
    if (!this.needsSecond(row)) return 'cleared'
    if (row.status === 'open') return 'clear_pending'
    if (row.clear_requested_by === caller.credentialId) {
      throw new InvalidState('the review scored at or above the confirm score: another ' +
        'operator must clear it (you asked already)', [], 409)
    }
    return 'cleared'
  }

  private needsSecond(row: Pick<ReviewRow, 'top_score'>): boolean {
    return row.top_score >= this.screening.settings.confirmScore
  }

  private async tell(trx: Kysely<Database>, change: ReviewChange): Promise<void> {
    for (const listener of this.listeners) await listener(trx, change)
  }

  private view(row: ReviewRow): ReviewView {
    return {
      id: row.id, partner_id: row.partner_id, entity_id: row.entity_id, subject: row.subject,
      subject_id: row.subject_id, cause: row.cause,
      screened: row.screened as unknown as Screened[],
      hits: row.hits as unknown as ScreeningHit[], top_score: row.top_score,
      status: row.status,
      needs_second_operator: undecided.includes(row.status) && this.needsSecond(row),
      opened_at: formatTimestamp(new Date(row.opened_at)),
      clear_requested_by: row.clear_requested_by_name,
      decided_by: row.decided_by_name,
      decided_at: row.decided_at ? formatTimestamp(new Date(row.decided_at)) : null,
      reason: row.reason,
    }
  }
}

/** The list entries cleared for the subject by an operator before. */
async function clearedEntries(db: Kysely<Database>, subjectId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('screening_reviews').select('hits')
    .where('subject_id', '=', subjectId).where('status', '=', 'cleared').execute()
  return new Set(rows.flatMap((row) => (row.hits as unknown as ScreeningHit[]).map(entryKey)))
}

/** A list entry across loads: its list and its reference on it. */
function entryKey(hit: Pick<ScreeningHit, 'source' | 'list_ref'>): string {
  return `${hit.source}:${hit.list_ref}`
}
