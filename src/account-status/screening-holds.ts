import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { appendEvents } from '../events/event-outbox.ts'
import type { Database } from '../schema.ts'
import type { ReviewChange, ScreeningReviews } from '../screening/screening-reviews.ts'
import { lastChange, type AccountStatusService } from './account-status-service.ts'

// What a customer's screening review does to its accounts (RULINGS "Financial crime
// controls"): while the entity is held (a review of it or of one of its users undecided or
// confirmed) its accounts are frozen by the bank (`system`, which a partner cannot lift),
// in the review's own transaction; when the last review holding it is cleared, the accounts
// that a screening froze (and nobody changed since) are unfrozen. A confirmed hit keeps them
// frozen until an operator unfreezes them. Each change of where the customer stands is
// announced to its partner (`entity.screening_changed`: `review`, `confirmed`, `clear`; never
// the list's entry). A payment's review (a payout's recipient, an incoming payment's payer)
// holds only that payment while undecided; confirmed, it freezes the entity's accounts (and
// holds the entity) as a customer's confirmed hit does.

export const screening_freeze_reason = "held for the bank's sanctions screening review"
const screening_unfreeze_reason = "cleared by the bank's sanctions screening review"

const system = { kind: 'system' } as const

export function holdAccountsOnScreening(reviews: ScreeningReviews,
    accountStatus: AccountStatusService, clock: Clock): void {
  reviews.listen(async (trx, change) => {
    const { review } = change
    const customer = review.subject === 'entity' || review.subject === 'user'
    // A payment's review changes where its customer stands only once it is confirmed.
    if (!customer && change.to !== 'confirmed') return
    if (change.to === 'clear_pending') return
    const held = await reviews.heldStatus(trx, review.entity_id)
    if (change.to === 'open' || change.to === 'confirmed') {
      await freezeAll(trx, accountStatus, change)
    } else if (!held) {
      await unfreezeScreened(trx, accountStatus, review.entity_id)
    }
    const at = clock.now()
    await appendEvents(trx, [{ type: 'entity.screening_changed', partner_id: review.partner_id,
      resource_id: review.entity_id, occurred_at: at, data: { entity_id: review.entity_id,
        user_id: review.subject === 'user' ? review.subject_id : null,
        status: held ?? 'clear', changed_at: formatTimestamp(at) } }])
  })
}

async function freezeAll(trx: Kysely<Database>, accountStatus: AccountStatusService,
    change: ReviewChange): Promise<void> {
  const accounts = await trx.selectFrom('accounts').select('id')
    .where('entity_id', '=', change.review.entity_id)
    .where('status', 'in', ['active', 'dormant']).orderBy('id').execute()
  for (const account of accounts) {
    await accountStatus.changeIn(trx, system, account.id, 'freeze', screening_freeze_reason)
  }
}

async function unfreezeScreened(trx: Kysely<Database>, accountStatus: AccountStatusService,
    entityId: string): Promise<void> {
  const accounts = await trx.selectFrom('accounts').select('id')
    .where('entity_id', '=', entityId).where('status', '=', 'frozen').orderBy('id').execute()
  for (const account of accounts) {
    const last = await lastChange(trx, account.id)
    if (last?.changed_by !== 'system' || last.reason !== screening_freeze_reason) continue
    await accountStatus.changeIn(trx, system, account.id, 'unfreeze',
      screening_unfreeze_reason)
  }
}
