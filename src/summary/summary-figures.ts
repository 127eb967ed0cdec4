import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { lastVerifyResult } from '../ledger/verify-result.ts'
import type { BusinessFigures } from '../metrics/business-gauges.ts'
import type { Database } from '../schema.ts'
import { recentEndedByPartner } from '../webhooks/webhook-store.ts'
import { summary_delivery_window } from './summary-contract.ts'
import { lastEndedClearingRun, moneyTotals, pendingEfts, reviewQueues } from './summary-store.ts'

// The business figures behind the Prometheus gauges (metrics/business-gauges.ts): the
// summary's own aggregates (money held, pending EFTs, the webhook deliveries' window) and a
// few more of the same kind (the oldest pending EFT, the last clearing cycle's report, the
// last ledger verify, the review queues), each an indexed read, all at once. Ages of what the
// bank's clock stamps (payments, submissions, approvals, jobs) are on that clock; the verify's
// age is on the wall clock that stamped it.

const report_outcomes = ['settled', 'failed', 'invalid', 'returned'] as const

export async function businessFigures(db: Kysely<Database>, clock: Clock,
    wallNow: number): Promise<BusinessFigures> {
  const now = clock.now().getTime()
  const ageOf = (at: Date | undefined, from = now) =>
    at ? Math.max(0, (from - at.getTime()) / 1000) : 0
  const [money, pending, clearing, verify, queues, ended] = await Promise.all([
    moneyTotals(db),
    pendingEfts(db),
    lastEndedClearingRun(db),
    lastVerifyResult(db),
    reviewQueues(db),
    recentEndedByPartner(db, summary_delivery_window),
  ])
  const queue = (q: { count: number; oldest: Date | undefined }) => ({ count: q.count,
    oldest_age_seconds: ageOf(q.oldest) })
  return {
    held_cents: Number(money.held),
    pending_eft: { count: pending.count, amount_cents: Number(pending.amount),
      oldest_age_seconds: ageOf(pending.oldest) },
    clearing_last: clearing && {
      ended_age_seconds: ageOf(clearing.ended_at),
      counts: reportCounts(clearing.result),
    },
    ledger_verify: verify && { ok: verify.ok, problems: verify.problems,
      age_seconds: ageOf(verify.finished_at, wallNow) },
    queues: { kyc: queue(queues.kyc), kyb: queue(queues.kyb),
      approvals: queue(queues.approvals) },
    webhook_failure_rate: ended.map((p) => ({ partner_id: p.partner_id,
      rate: p.failed / (p.delivered + p.failed) })),
  }
}

/** A clearing report's counts, when the job left one (a dead cycle has none). */
function reportCounts(result: Record<string, unknown> | null): NonNullable<
    BusinessFigures['clearing_last']>['counts'] {
  if (!result || typeof result.settled !== 'number') return undefined
  const count = (outcome: (typeof report_outcomes)[number]) =>
    typeof result[outcome] === 'number' ? result[outcome] : 0
  return { settled: count('settled'), failed: count('failed'), invalid: count('invalid'),
    returned: count('returned') }
}
