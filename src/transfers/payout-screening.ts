import type { Kysely } from 'kysely'
import { pendingPayoutsByIds } from '../ledger/ledger-store.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import { payoutSettlements } from '../ledger/payment-journals.ts'
import type { Database } from '../schema.ts'
import type { CheckedSubject, ReviewChange, ScreeningReviews }
  from '../screening/screening-reviews.ts'
import type { ScreeningHit } from '../screening/screening-service.ts'
import type { Screened } from '../screening/screening-tables.ts'

// Payout recipients screened against the sanctions lists (RULINGS "Financial crime
// controls": "A payout hit → the payment stays `Pending` in review"). The recipient's name is
// screened as an individual and as an entity, before the payment is taken and outside any
// transaction (`ScreeningReviews.check`). A payout without a hit (nearly all) takes exactly
// the path it took before: the in-memory screen is all it adds. On a hit the paying
// account's entity is read (the review names it) and the review is written in the payment's
// own transaction (the payment desk's `alongside`), so the payment is never stored without
// it. While its review is undecided the clearing cycle does not send it and the RTC recovery
// does not pay it (`heldOf`). Cleared, it goes on as any Pending payout: an EFT in the next
// cycle, an RTC by the RTC recovery. Confirmed, it fails (its hold released: the money stays
// with the payer) in the decision's transaction; the account-status module freezes the
// paying entity's accounts (account-status/screening-holds.ts). A bulk batch's payments are
// screened the same way when they become payouts (bulk/bulk-processing.ts: `checkAll`,
// `hold`, `heldOf`), and go on or fail by `onDecided`, since their rows are bulk/'s.

/** The reason a confirmed payout fails with: never the list entry. */
export const screening_failed_reason = "refused by the bank's sanctions screening"

export class PayoutScreening {
  constructor(
    private readonly reviews: ScreeningReviews,
    private readonly accounts: {
      get(partnerId: string, accountId: string): Promise<{ entity_id: string }>
    },
  ) {}

  /**
   * Screens a payout's recipient: undefined without a hit (the common case, nothing else
   * read); with one, the subject to hold in the payment's transaction. A paying account
   * that is not the partner's is not found (404), as the payment desk would answer.
   */
  async check(partnerId: string, accountId: string, txId: string,
      name: string): Promise<CheckedSubject | undefined> {
    return (await this.checkAll(partnerId, accountId, [{ txId, name }]))[0]
  }

  /**
   * Screens the recipients of several payouts from one paying account (a bulk batch's): the
   * subjects with a hit, to hold in the payments' transaction. Each distinct name is screened
   * once, and the account's entity is read once, on the first hit.
   */
  async checkAll(partnerId: string, accountId: string,
      payouts: ReadonlyArray<{ txId: string; name: string }>): Promise<CheckedSubject[]> {
    const hitsByName = new Map<string, ScreeningHit[]>()
    const checked: CheckedSubject[] = []
    let entityId: string | undefined
    for (const { txId, name } of payouts) {
      const screened = screenedOf(name)
      let hits = hitsByName.get(name)
      if (!hits) hitsByName.set(name, hits = await this.reviews.hitsOf(screened))
      if (hits.length === 0) continue
      entityId ??= (await this.accounts.get(partnerId, accountId)).entity_id
      checked.push({ subject: { partnerId, entityId, subject: 'payout', subjectId: txId,
        cause: 'payout', screened }, hits })
    }
    return checked
  }

  /** Writes the payouts' reviews in their payments' transaction. */
  async hold(trx: Kysely<Database>, checked: readonly CheckedSubject[]): Promise<void> {
    for (const one of checked) await this.reviews.hold(trx, one)
  }

  /** The payouts among these whose review is undecided: not to be sent yet. */
  heldOf(db: Kysely<Database>, txIds: readonly string[]): Promise<Set<string>> {
    return this.reviews.undecidedOf(db, 'payout', txIds)
  }

  /** Fails a payout when its review is confirmed, in the decision's transaction. */
  listen(ledger: ComposedWriter): void {
    this.reviews.listen(async (trx, change) => {
      if (change.review.subject !== 'payout' || change.to !== 'confirmed') return
      await failPayout(trx, ledger, change)
    })
  }

  /**
   * Hears each decision (`cleared`, `confirmed`) of a payout's review, in the decision's
   * transaction: how payouts kept elsewhere than transfers' rows (a bulk batch's payments)
   * go on or fail. It hears it before the listeners that lock accounts (the freeze of a
   * confirmed hit), so a lock its payouts take before their accounts' (a batch's) comes first.
   */
  onDecided(listener: (trx: Kysely<Database>, change: ReviewChange & {
      to: 'cleared' | 'confirmed' }) => Promise<void>): void {
    this.reviews.listen(async (trx, change) => {
      if (change.review.subject !== 'payout') return
      if (change.to === 'cleared' || change.to === 'confirmed') {
        await listener(trx, { ...change, to: change.to })
      }
    }, { first: true })
  }
}

/** A recipient's name, screened as an individual and as an entity. */
function screenedOf(name: string): Screened[] {
  return [{ name, kind: 'individual' }, { name, kind: 'entity' }]
}

async function failPayout(trx: Kysely<Database>, ledger: ComposedWriter,
    change: ReviewChange): Promise<void> {
  const work = await pendingPayoutsByIds(trx, [change.review.subject_id])
  if (work.length === 0) return
  // Settled under the account's lock only while still Pending (payoutSettlements).
  await ledger.write(trx, payoutSettlements, work.map(({ payout }) => ({ payout,
    outcome: { status: 'failed' as const, reason: screening_failed_reason } })))
}
