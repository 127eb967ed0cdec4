import type { Kysely } from 'kysely'
import type { IncomingCredit } from '../rails/iso20022/pacs008-read.ts'
import type { Database } from '../schema.ts'
import type { ScreeningHit } from '../screening/screening-service.ts'
import type { ScreeningReviews } from '../screening/screening-reviews.ts'
import type { Screened } from '../screening/screening-tables.ts'

// Incoming payers screened against the sanctions lists (RULINGS "Financial crime controls").
// The payer's name of each credit of an incoming message is screened, as an individual and
// as an entity, before the message's transaction opens (the screening reads on a connection
// of its own). A credit whose payer hits is booked to its account as any credit, and in the
// same transaction a review opens (`incoming`, the credit's tx_id) and the bank places a
// legal hold of its amount on the account, its reference naming the review. Cleared, the
// hold is released; confirmed, it stays, and the account-status module freezes the entity's
// accounts (account-status/screening-holds.ts).

/** The hits of each credit's payer that has any, by the credit's key (creditKey). */
export type ScreenedPayers = ReadonlyMap<string, { screened: Screened[]; hits: ScreeningHit[] }>

/** The bank's legal holds, placed and released by the bank itself in a caller's transaction. */
export interface SystemHolds {
  placeBySystem(trx: Kysely<Database>, hold: { account_id: string; partner_id: string;
    amount: bigint; reference: string }): Promise<unknown>
  releaseBySystem(trx: Kysely<Database>, accountId: string, reference: string,
    reason: string): Promise<number>
}

/** A booked credit to hold when its payer hit. */
export interface BookedCredit {
  credit: IncomingCredit
  accountId: string
  txId: string
  partner_id: string
}

const cleared_reason = "cleared by the bank's sanctions screening review"

/** The legal hold's reference: names the review (what an operator reads on the account). */
export function screeningHoldReference(reviewId: string): string {
  return `sanctions screening review ${reviewId}`
}

/** A credit within its message: its paying bank's end-to-end id. */
export function creditKey(credit: IncomingCredit): string {
  return `${credit.debtor_branch_code} ${credit.end_to_end_id}`
}

export class IncomingScreening {
  constructor(
    private readonly reviews: ScreeningReviews,
    private readonly holds: SystemHolds,
    private readonly accounts: { get(partnerId: string, accountId: string,
      executor: Kysely<Database>): Promise<{ entity_id: string }> },
  ) {}

  /** Screens the credits' payers (outside any transaction): those with hits. */
  async check(credits: readonly IncomingCredit[]): Promise<ScreenedPayers> {
    const found = new Map<string, { screened: Screened[]; hits: ScreeningHit[] }>()
    for (const credit of credits) {
      const name = credit.debtor_name
      if (!name) continue
      const screened: Screened[] = [{ name, kind: 'individual' }, { name, kind: 'entity' }]
      const hits = await this.reviews.hitsOf(screened)
      if (hits.length > 0) found.set(creditKey(credit), { screened, hits })
    }
    return found
  }

  /** Opens the reviews of the booked credits whose payer hit and holds their amounts. */
  async hold(trx: Kysely<Database>, screened: ScreenedPayers,
      booked: readonly BookedCredit[]): Promise<void> {
    if (screened.size === 0) return
    for (const one of booked) {
      const found = screened.get(creditKey(one.credit))
      if (!found) continue
      const account = await this.accounts.get(one.partner_id, one.accountId, trx)
      const held = await this.reviews.hold(trx, { subject: { partnerId: one.partner_id,
        entityId: account.entity_id, subject: 'incoming', subjectId: one.txId,
        cause: 'incoming', screened: found.screened }, hits: found.hits })
      if (held.status !== 'review') continue
      await this.holds.placeBySystem(trx, { account_id: one.accountId,
        partner_id: one.partner_id, amount: one.credit.amount,
        reference: screeningHoldReference(held.reviewId) })
    }
  }

  /** Releases a credit's hold when its review is cleared, in the decision's transaction. */
  listen(): void {
    this.reviews.listen(async (trx, change) => {
      if (change.review.subject !== 'incoming' || change.to !== 'cleared') return
      const row = await trx.selectFrom('incoming_payments').select('account_id')
        .where('tx_id', '=', change.review.subject_id).executeTakeFirst()
      if (!row?.account_id) return
      await this.holds.releaseBySystem(trx, row.account_id,
        screeningHoldReference(change.review.id), cleared_reason)
    })
  }
}
