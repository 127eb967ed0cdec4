import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { fromSast, toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import { clockPartner, type Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import {
  payoutsByIds, pendingPayouts, pendingPayoutsByIds, type PayoutCursor, type PendingPayoutWork,
} from '../ledger/ledger-store.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import type { Logger } from '../logger.ts'
import { assert, Conflict } from '../errors.ts'
import { JobGroupBusy, type JobRunner } from '../jobs/job-runner.ts'
import { findJobByKey } from '../jobs/job-store.ts'
import type { JobView } from '../jobs/jobs-contract.ts'
import { appendEvent } from '../events/index.ts'
import type { Rail, RailOutcome, RailPayment } from '../rails/rail.ts'
import type { PayoutSource } from '../rails/rail-tables.ts'
import type {
  InboundSummary, IsoRail, OutgoingTransfer, PayoutReturn, PayoutStatus, SettledCounts,
} from '../rails/iso-rail.ts'
import type { PaymentAdvices } from './payment-advice.ts'
import type { PayoutScreening } from './payout-screening.ts'
import { payoutReturns, payoutSettlements, type PendingPayout } from '../ledger/payment-journals.ts'
import {
  clearing_job_limits, rail_inbound_job_limits, rtc_recovery_job_limits,
} from './transfer-limits.ts'

// The report's shape is the `ops.clearing.run` reply schema's.
import type { ClearingReport } from './clearing-contract.ts'
export type { ClearingReport }

// The bank's side of EFT clearing, run as jobs (src/jobs): each cycle is one
// `clearing.cycle` job, unique per cycle, planned when its time has come on a business day
// (or made on demand by `bank clearing run`). The job runner gives a run one owner under a
// lease, so a cycle whose instance died is taken over once its lease expires. A run applies
// what the clearing house sent (status reports → Successful, Failed or Invalid; returns →
// Reversed), sends the pending EFTs taken before the cycle's cut-off that were never sent, as
// pacs.008 files (rails/iso-rail.ts: recorded before written, so a run cut short writes the
// same file again and sends nothing twice), and asks the gateway about RTCs without an
// answer. Each answer settles its payouts under their accounts' locks, only those still
// Pending, so nothing settles twice. A second, recurring `rtc.recovery` job does that recovery
// between cycles too, and `rail.inbound` applies the clearing house's files as they arrive.

export const clearing_job_kind = 'clearing.cycle'
export const rtc_recovery_job_kind = 'rtc.recovery'
export const rail_inbound_job_kind = 'rail.inbound'
/**
 * The exclusive job group of the work that submits EFTs to the rail (a cycle and its bulk share).
 */
export const eft_submission_group = 'rail.eft'

/** The ISO 20022 rail a cycle's EFTs go out on, and where their answers come from. */
export interface ClearingRails {
  iso: IsoRail
  /** The payers' account numbers and names, by account id (a pacs.008's debtors). */
  payers(accountIds: readonly string[]): Promise<Map<string, { account_number: string;
    name: string }>>
}

/** Payouts an answer's transaction books at a time (a report may answer a whole file). */
const answers_chunk = 1000

/** A page of pending payouts to send (none held in review) and where the next starts. */
interface PayoutPage {
  work: PendingPayoutWork[]
  after: PayoutCursor
}

export interface ClearingOptions {
  cyclesSast: number[]
  chunkMax: number
  rtcRecoveryAfterMs: number
  /** Plan scheduled cycles and the recurring RTC recovery (off: only `bank clearing run`). */
  schedule: boolean
}

export class ClearingService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly ledger: ComposedWriter,
    private readonly calendar: SouthAfricanCalendar,
    private readonly rail: Rail,
    private readonly jobs: JobRunner,
    private readonly advices: PaymentAdvices,
    private readonly options: ClearingOptions,
    private readonly log: Logger,
    private readonly rails: ClearingRails,
    /** Payouts in a sanctions screening review are not sent (payout-screening.ts). */
    private readonly screening: Pick<PayoutScreening, 'heldOf'>,
  ) {
    rails.iso.handleStatuses('transfer', (trx, statuses) => this.settleAnswers(trx, statuses))
    rails.iso.handleReturns((trx, returns) => this.reverseReturned(trx, returns))
    jobs.register({
      kind: clearing_job_kind,
      // One EFT submission at a time: overlapping runs would hand the same payments to the rail
      // twice.
      exclusive: eft_submission_group,
      ...clearing_job_limits,
      run: (job) => this.run(String(job.payload.cycle), new Date(String(job.payload.cutoff)),
        job.attempt > 1),
      ...(options.schedule ? { plan: (now: Date) => this.plannedCycles(now) } : {}),
      // In the sandbox a partner whose clock is ahead has cycles of its own, for its EFTs.
      per_partner: true,
    })
    if (options.schedule) {
      jobs.register({
        kind: rtc_recovery_job_kind,
        ...rtc_recovery_job_limits,
        plan: (now) => [{ key: 'recurring', due_at: now }],
        next: (now) => new Date(now.getTime() + options.rtcRecoveryAfterMs / 2),
        run: async () => {
          const report = emptyReport('rtc-recovery', false)
          await this.recoverRealTime(report)
          return { rtc_recovered: report.rtc_recovered }
        },
      })
      // The clearing house's status reports and returns are applied as they arrive, not
      // only at the next cycle; never beside a cycle (which applies them too).
      jobs.register({
        kind: rail_inbound_job_kind,
        exclusive: eft_submission_group,
        ...rail_inbound_job_limits,
        plan: (now) => [{ key: 'recurring', due_at: now }],
        next: (now) => new Date(now.getTime() + rail_inbound_job_limits.every_ms),
        run: async () => ({ ...(await this.rails.iso.exchange()) }),
      })
    }
  }

  /**
   * Runs a cycle now (`ops.clearing.run`), as a job of its own, here, and answers its
   * report; 409 when another cycle is still running after BANK_JOBS_EXCLUSIVE_WAIT_MS.
   */
  async runNow(): Promise<ClearingReport> {
    const report = await this.jobs.runNew(this.manualCycle()).catch((error: unknown) => {
      if (error instanceof JobGroupBusy) throw new Conflict('an EFT clearing cycle is running ' +
        '(here or on another instance); run again when it has ended')
      throw error
    })
    assert(report, 'a manual clearing cycle has a key of its own')
    return report as unknown as ClearingReport
  }

  /**
   * The same cycle, detached (`ops.clearing.run` with `detach: true`, what `bank clearing
   * run` sends): queued for any instance to run after a cycle still running, and answered
   * at once; its report becomes the job's `result` (`ops.jobs.get`).
   */
  start(): Promise<JobView> {
    return this.jobs.startNew(this.manualCycle())
  }

  /** A manual cycle's job: a key of its own, its cut-off now. */
  private manualCycle() {
    const now = this.clock.now()
    const cycle = `manual:${now.toISOString()}:${randomUUID().slice(0, 8)}`
    return { kind: clearing_job_kind, key: cycle, payload: { cycle, cutoff: now.toISOString() } }
  }

  /** The latest scheduled cycle due now, if it has not run: `YYYY-MM-DDTHH:MM` SAST. */
  dueCycle(now: Date): { cycle: string; cutoff: Date } | undefined {
    const sast = toSast(now)
    if (!this.calendar.isBusinessDay(sast.date)) return undefined
    const due = this.options.cyclesSast.filter((m) => m <= sast.minutes).at(-1)
    if (due === undefined) return undefined
    const hhmm =
      `${String(Math.floor(due / 60)).padStart(2, '0')}:${String(due % 60).padStart(2, '0')}`
    return { cycle: `${sast.date}T${hhmm}`, cutoff: fromSast(sast.date, due) }
  }

  private plannedCycles(now: Date) {
    const due = this.dueCycle(now)
    return due ? [{ key: due.cycle, due_at: due.cutoff,
      payload: { cycle: due.cycle, cutoff: due.cutoff.toISOString() } }] : []
  }

  /**
   * Runs the cycle due now here, unless it is done or another instance holds it: a new
   * cycle starts as this instance's job; one that failed earlier is resumed at once.
   */
  async runDue(): Promise<ClearingReport | undefined> {
    const due = this.dueCycle(this.clock.now())
    if (!due) return undefined
    const payload = { cycle: due.cycle, cutoff: due.cutoff.toISOString() }
    const fresh = await this.jobs.runNew({ kind: clearing_job_kind, key: due.cycle,
        due_at: due.cutoff, payload }).catch((error: unknown) => {
      if (error instanceof JobGroupBusy) return 'busy' as const
      throw error
    })
    if (fresh === 'busy') return undefined
    if (fresh) return fresh as unknown as ClearingReport
    const existing = await findJobByKey(this.db, clearing_job_kind, due.cycle)
    if (!existing || existing.state === 'done' || existing.state === 'dead') return undefined
    return (await this.jobs.runById(existing.id)) as unknown as ClearingReport | undefined
  }

  async run(cycle: string, cutoff: Date, resumed: boolean): Promise<ClearingReport> {
    const report = emptyReport(cycle, resumed)
    // What the clearing house sent since the last cycle first (in the sandbox its returns
    // of the last cycle's payments): a payment settled in this run is returned, at the
    // earliest, in the next.
    addInbound(report, await this.rails.iso.exchange(true))
    await this.collectReturns(report)
    await this.rails.iso.writeUnwritten()
    await this.submitEfts(cycle, cutoff, report)
    // In the sandbox the clearing house answers at once, and the run returns with every
    // payment's outcome applied; elsewhere the answers are applied when they arrive. With an
    // SFTP server the same exchange carries this cycle's files to it now.
    if (this.rails.iso.answersAtOnce || this.rails.iso.carrier) {
      addInbound(report, await this.rails.iso.exchange())
    }
    await this.recoverRealTime(report)
    // Announced through the outbox. A run taken over after a crash may announce its cycle
    // again: events are delivered at least once, and the cycle names the run.
    await this.db.transaction().execute((trx) =>
      appendEvent(trx, { type: 'clearing.cycle_completed', partner_id: null, resource_id: cycle,
        data: report, occurred_at: this.clock.now() }),
    )
    this.log.info(report, 'clearing run finished')
    return report
  }

  /**
   * Sends the pending EFTs taken by the cut-off that were not sent before, one pacs.008 per
   * chunk, for the cycle's settlement day (its business day in SAST).
   */
  private async submitEfts(cycle: string, cutoff: Date, report: ClearingReport): Promise<void> {
    const settlementDate = toSast(cutoff).date
    let after: PayoutCursor | undefined
    for (;;) {
      const page = await this.unheld(await this.pendingPayouts('EFT', cutoff, after))
      if (page === undefined) return
      after = page.after
      const sent = await this.rails.iso.submitted(page.work.map((w) => w.payout.tx_id))
      const fresh = page.work.filter((w) => !sent.has(w.payout.tx_id))
      if (fresh.length === 0) continue
      const sendable = await this.refuseUnsendable(fresh, await this.transfersOf(fresh), report)
      if (sendable.length === 0) continue
      const messageId = await this.rails.iso.submitEft(sendable, settlementDate)
      this.log.info({ cycle, message_id: messageId, payments: sendable.length },
        'clearing: EFT file written')
    }
  }

  /**
   * A payout whose details the rail's message cannot hold is never sent: it ends `Invalid`
   * (hold released) with the reason, and the rest of the cycle goes out. Answers the rest.
   */
  private async refuseUnsendable(work: PendingPayoutWork[], transfers: OutgoingTransfer[],
      report: ClearingReport): Promise<OutgoingTransfer[]> {
    const reasons = new Map<string, RailOutcome>()
    const sendable: OutgoingTransfer[] = []
    for (const t of transfers) {
      const why = this.rails.iso.unsendable(t)
      if (why === undefined) sendable.push(t)
      else reasons.set(t.tx_id, { status: 'invalid',
        reason: `the payment cannot be sent on the rail: ${why}` })
    }
    if (reasons.size === 0) return sendable
    const refused = work.filter((w) => reasons.has(w.payout.tx_id))
    await this.settleChunk(refused, (id) => reasons.get(id), report)
    return sendable
  }

  private async transfersOf(work: PendingPayoutWork[]): Promise<OutgoingTransfer[]> {
    const payers = await this.rails.payers(work.map((w) => w.payout.account_id))
    return work.map(({ payout, payment }) => {
      const payer = payers.get(payout.account_id)
      assert(payer, `payout ${payout.tx_id}: its account ${payout.account_id} has no payer`)
      return {
        tx_id: payout.tx_id, source: 'transfer', amount: payout.amount, ref: payment.ref,
        debtor: { name: payer.name, account_number: payer.account_number },
        creditor: { name: payment.name, account_number: payment.account_number,
          branch_code: payment.branch_code },
      }
    })
  }

  /** The payers' account numbers and names, by account id (a pacs.008's debtors). */
  payersOf(accountIds: readonly string[]): Promise<Map<string, { account_number: string;
      name: string }>> {
    return this.rails.payers(accountIds)
  }

  /** Books a status report's answers to transfers (IsoRail's handler, in its transaction). */
  private async settleAnswers(trx: Kysely<Database>,
      statuses: PayoutStatus[]): Promise<SettledCounts> {
    const outcomes = new Map(statuses.map((s) => [s.tx_id, s.outcome]))
    const ids = [...outcomes.keys()]
    const counts = { settled: 0, failed: 0, invalid: 0 }
    // In chunks: a report may answer a whole cycle's file.
    for (let start = 0; start < ids.length; start += answers_chunk) {
      const work = await pendingPayoutsByIds(trx, ids.slice(start, start + answers_chunk))
      if (work.length > 0) await this.settleIn(trx, work, (id) => outcomes.get(id), counts)
    }
    return counts
  }

  /**
   * Books returns (IsoRail's handler, in the return message's transaction): each payout
   * still Successful under its account's lock is reversed; those still Pending wait.
   */
  private async reverseReturned(trx: Kysely<Database>,
      returns: PayoutReturn[]): Promise<{ reversed: number; waiting: number }> {
    const reasons = new Map(returns.map((r) => [r.tx_id, r.reason]))
    const ids = [...reasons.keys()]
    const total = { reversed: 0, waiting: 0 }
    for (let start = 0; start < ids.length; start += answers_chunk) {
      const originals = await payoutsByIds(trx, ids.slice(start, start + answers_chunk))
      const returned = originals.map((payout) => ({ payout,
        reason: reasons.get(payout.tx_id) ?? 'returned' }))
      const booked = await this.ledger.write(trx, payoutReturns, returned)
      total.reversed += booked.reversed
      total.waiting += booked.waiting.length
    }
    return total
  }

  private async recoverRealTime(report: ClearingReport): Promise<void> {
    // An RTC still Pending this long after it was taken lost its answer (none within the
    // bound, or a crash): the gateway is asked its status, page by page past those that
    // still have none.
    const before = new Date(this.clock.now().getTime() - this.options.rtcRecoveryAfterMs)
    let after: PayoutCursor | undefined
    for (;;) {
      const chunk = await this.unheld(await this.pendingPayouts('RTC', before, after))
      if (chunk === undefined) return
      after = chunk.after
      const outcomes = new Map<string, RailOutcome | undefined>()
      for (const c of chunk.work) outcomes.set(c.payout.tx_id,
        await this.payRealTime(c.payout.account_id, c.payment))
      const answered = chunk.work.filter((c) => outcomes.get(c.payout.tx_id))
      if (answered.length === 0) continue
      const counts = { settled: 0, failed: 0, invalid: 0 }
      await this.settleChunk(answered, (id) => outcomes.get(id), counts)
      report.rtc_recovered += counts.settled + counts.failed + counts.invalid
    }
  }

  /**
   * Pays an RTC through the ISO rail's gateway (or asks its status when it was sent): its
   * outcome, or undefined while none has come.
   */
  async payRealTime(accountId: string, payment: RailPayment, source: PayoutSource = 'transfer',
      sourceRef?: string): Promise<RailOutcome | undefined> {
    const payer = (await this.rails.payers([accountId])).get(accountId)
    assert(payer, `payout ${payment.tx_id}: its account ${accountId} has no payer`)
    const transfer: OutgoingTransfer = {
      tx_id: payment.tx_id, source, source_ref: sourceRef, amount: payment.amount,
      ref: payment.ref, debtor: payer,
      creditor: { name: payment.name, account_number: payment.account_number,
        branch_code: payment.branch_code },
    }
    const why = this.rails.iso.unsendable(transfer)
    if (why !== undefined) {
      return { status: 'invalid', reason: `the payment cannot be sent on the rail: ${why}` }
    }
    return this.rails.iso.payRealTime(transfer)
  }

  /**
   * A page of pending payouts without those held in a screening review, with the page's
   * cursor (its last payout, held or not); undefined at the end.
   */
  private async unheld(page: PendingPayoutWork[]): Promise<PayoutPage | undefined> {
    const last = page.at(-1)
    if (!last) return undefined
    const held = await this.screening.heldOf(this.db, page.map((w) => w.payout.tx_id))
    const work = held.size === 0 ? page : page.filter((w) => !held.has(w.payout.tx_id))
    return { work, after: { created_at: last.created_at, tx_id: last.payout.tx_id } }
  }

  private pendingPayouts(paymentType: 'EFT' | 'RTC', takenBefore: Date,
      after?: PayoutCursor): Promise<PendingPayoutWork[]> {
    return pendingPayouts(this.db, paymentType, takenBefore, this.options.chunkMax, after,
      clockPartner())
  }

  /** Settles a chunk in one transaction, skipping rows another run settled meanwhile. */
  private async settleChunk(
    chunk: Array<{ payout: PendingPayout }>,
    outcomeOf: (txId: string) => RailOutcome | undefined,
    report: SettledCounts,
  ): Promise<void> {
    await this.db.transaction().execute((trx) => this.settleIn(trx, chunk, outcomeOf, report))
  }

  private async settleIn(
    trx: Kysely<Database>,
    chunk: Array<{ payout: PendingPayout }>,
    outcomeOf: (txId: string) => RailOutcome | undefined,
    report: SettledCounts,
  ): Promise<void> {
    // Each payout's status is read under its account's lock (transactionsOf), so a payout
    // another run settled meanwhile is left as it is.
    const answered = chunk.map(({ payout }) => ({ payout, outcome: outcomeOf(payout.tx_id) }))
    const settled = await this.ledger.write(trx, payoutSettlements, answered)
    const succeeded: string[] = []
    for (const { tx_id, status } of settled) {
      if (status === 'Successful') {
        report.settled++
        succeeded.push(tx_id)
      } else if (status === 'Failed') report.failed++
      else report.invalid++
    }
    // The payment advices of the payments this chunk paid commit with it (payment-advice.ts).
    await this.advices.paid(trx, succeeded)
  }

  /**
   * Books the rail's returns: a payment still `Successful` is reversed. The rail is told
   * which returns are dealt with only after that commits, so a run that dies in between is
   * handed them again (and finds them reversed). A return for a payment still `Pending` is
   * left with the rail until the payment settles.
   */
  private async collectReturns(report: ClearingReport): Promise<void> {
    const returns = await this.rail.collectReturns()
    if (returns.length === 0) return
    const originals = await payoutsByIds(this.db, returns.map((r) => r.tx_id))
    const waiting = new Set<string>()
    await this.db.transaction().execute(async (trx) => {
      const returned = originals.map((payout) => {
        const reason = returns.find((r) => r.tx_id === payout.tx_id)?.reason ?? 'returned'
        return { payout, reason }
      })
      // Each payout's status is read under its account's lock (transactionsOf).
      const booked = await this.ledger.write(trx, payoutReturns, returned)
      for (const txId of booked.waiting) waiting.add(txId)
      report.returned += booked.reversed
    })
    await this.rail.acknowledgeReturns(returns.map((r) => r.tx_id).filter((id) => !waiting.has(id)))
  }
}

function addInbound(report: ClearingReport, summary: InboundSummary): void {
  report.settled += summary.settled
  report.failed += summary.failed
  report.invalid += summary.invalid
  report.returned += summary.returned
}

function emptyReport(cycle: string, resumed: boolean): ClearingReport {
  return { cycle, resumed, settled: 0, failed: 0, invalid: 0, returned: 0, rtc_recovered: 0 }
}
