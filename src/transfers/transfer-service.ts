import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isDatabaseUnavailable } from '../db/errors.ts'
import type { Caller } from '../auth/credential-store.ts'
import { toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import type { Database } from '../db/schema.ts'
import { assert, Conflict, Invalid, NotFound, Unavailable } from '../errors.ts'
import { GroupCommitter, isRetryableDatabaseError, type BatchOutcome } from '../ledger/group-committer.ts'
import { LedgerBatch } from '../ledger/ledger-batch.ts'
import { statusesUnderLock } from '../ledger/ledger-store.ts'
import { claimTransferKeys, releaseTransferKeys, transferKeysOf } from './transfer-store.ts'
import type { Rail, RailOutcome } from '../rails/rail.ts'
import { settlePayout, type PendingPayout, type SettledStatus } from './settlement.ts'
import type { TransferRequest } from './transfer-contract.ts'

// Single payouts (RULINGS, Accounts and the ledger). A transfer is taken in two steps:
//  1. reserve: in one database transaction with others (group commit), claim the
//     clientTxId, check available ≥ amount + fee in request order, hold it, and write
//     the Pending transfer and fee rows;
//  2. settle: RTC goes to the rail at once and is captured or released in a second
//     grouped transaction; EFT waits for the clearing cycle (clearing-service.ts).
// A crash between the two leaves a Pending RTC with its hold, which the clearing run
// resolves by asking the rail again (its answer is idempotent by tx_id).

export const limits = {
  eft_cents_max: 500_000_000n,
  rtc_cents_max: 500_000_000n,
  rtc_after_hours_cents_max: 25_000_000n,
  /** RTC's higher limit holds on business days from 00:00 until this minute SAST. */
  rtc_high_limit_until_minute: 16 * 60,
}

export interface TransferSettings {
  fees: { EFT: bigint; RTC: bigint }
  keyWindowMs: number
  batchJobsMax: number
  batchesInFlightMax: number
  queueJobsMax: number
}

interface ReserveJob {
  partnerId: string
  addedBy: string
  request: TransferRequest
  paymentType: 'EFT' | 'RTC'
  fee: bigint
  txId: string
  feeTxId: string | null
}

// The reply's shape is the transfer operation's response schema's.
import type { TransferResult } from './transfer-contract.ts'
export type { TransferResult }

const overloaded = () => new Unavailable('the bank is busy; try again shortly')

export class TransferService {
  private readonly reserver: GroupCommitter<ReserveJob, PendingPayout>
  private readonly settler: GroupCommitter<{ payout: PendingPayout; outcome: RailOutcome }, SettledStatus>

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly calendar: SouthAfricanCalendar,
    private readonly rail: Rail,
    private readonly settings: TransferSettings,
  ) {
    const options = {
      batch_jobs_max: settings.batchJobsMax,
      batches_in_flight_max: settings.batchesInFlightMax,
      queue_jobs_max: settings.queueJobsMax,
      overloaded,
      retryable: isRetryableDatabaseError,
      attempts_max: 3,
      isolatable: (error: unknown) => !isDatabaseUnavailable(error),
    }
    this.reserver = new GroupCommitter((jobs) => this.reserveBatch(jobs), { ...options, keysOf: (job) => [job.request.account_id] })
    this.settler = new GroupCommitter((jobs) => this.settleBatch(jobs), { ...options, keysOf: (job) => [job.payout.account_id] })
  }

  async transfer(caller: Caller, request: TransferRequest): Promise<TransferResult> {
    const paymentType = request.pay_and_clear ? 'RTC' : 'EFT'
    this.checkLimit(paymentType, BigInt(request.amount))
    const fee = this.settings.fees[paymentType]
    const job: ReserveJob = {
      partnerId: caller.partnerId as string,
      addedBy: caller.credentialId,
      request,
      paymentType,
      fee,
      txId: randomUUID(),
      feeTxId: fee > 0n ? randomUUID() : null,
    }
    const payout = await this.reserver.submit(job)
    const amount = String(request.amount)
    if (paymentType === 'EFT') return { tx_id: payout.tx_id, amount, status: 'Pending' }
    const outcome = await this.rail.payRealTime({
      tx_id: payout.tx_id,
      payment_type: 'RTC',
      amount: payout.amount,
      account_number: request.account_number,
      branch_code: request.branch_code,
      name: request.name,
      ref: request.ref,
    })
    const status = await this.settler.submit({ payout, outcome })
    return { tx_id: payout.tx_id, amount, status }
  }

  private checkLimit(paymentType: 'EFT' | 'RTC', amount: bigint): void {
    if (paymentType === 'EFT') {
      if (amount > limits.eft_cents_max) throw Invalid.field('amount', `an EFT is at most ${limits.eft_cents_max} cents`)
      return
    }
    const now = toSast(this.clock.now())
    const highLimit = this.calendar.isBusinessDay(now.date) && now.minutes < limits.rtc_high_limit_until_minute
    const max = highLimit ? limits.rtc_cents_max : limits.rtc_after_hours_cents_max
    if (amount > max) {
      throw Invalid.field(
        'amount',
        highLimit
          ? `an RTC is at most ${max} cents`
          : `an RTC outside business days 00:00-16:00 SAST is at most ${max} cents`,
      )
    }
  }

  private async reserveBatch(jobs: ReserveJob[]): Promise<BatchOutcome<PendingPayout>[]> {
    const outcomes: BatchOutcome<PendingPayout>[] = new Array(jobs.length)
    const duplicates: number[] = []
    await this.db.transaction().execute(async (trx) => {
      const batch = await LedgerBatch.open(trx, this.clock, jobs.map((j) => j.request.account_id))
      // The first job with a key in this batch claims it; a repeat waits for its result below.
      const firstWithKey = new Map<string, number>()
      const claimants: number[] = []
      jobs.forEach((job, i) => {
        if (!batch.has(job.request.account_id) || batch.account(job.request.account_id).partner_id !== job.partnerId) {
          outcomes[i] = { ok: false, error: new NotFound('account') }
          return
        }
        const key = `${job.partnerId}/${job.request.clientTxId}`
        if (firstWithKey.has(key)) duplicates.push(i)
        else {
          firstWithKey.set(key, i)
          claimants.push(i)
        }
      })
      const claimed = await this.claimKeys(trx, claimants.map((i) => jobs[i]!), batch.now)
      const released: ReserveJob[] = []
      for (const i of claimants) {
        const job = jobs[i]!
        if (!claimed.has(job.txId)) {
          duplicates.push(i)
          continue
        }
        const payout = reserve(batch, job)
        if (payout) outcomes[i] = { ok: true, value: payout }
        else {
          outcomes[i] = { ok: false, error: Invalid.field('amount', 'insufficient funds: available balance does not cover amount plus fee') }
          released.push(job)
        }
      }
      // A request refused for funds moved no money, so its key may be used again.
      await releaseTransferKeys(trx, released.map((j) => j.txId))
      await batch.flush()
      // Inside the transaction: should the batch be retried, it must not find its own keys.
      if (duplicates.length > 0) await this.answerDuplicates(trx, jobs, duplicates, outcomes)
    })
    return outcomes
  }

  /** Claims each job's key; returns the tx ids whose key was new (the others are duplicates). */
  private claimKeys(trx: Kysely<Database>, jobs: ReserveJob[], now: Date): Promise<Set<string>> {
    // A key older than the duplicate window no longer counts (configurable, 24 h by default).
    const cutoff = new Date(now.getTime() - this.settings.keyWindowMs)
    const keys = jobs.map((j) => ({ partner_id: j.partnerId, client_tx_id: j.request.clientTxId, tx_id: j.txId }))
    return claimTransferKeys(trx, keys, now, cutoff)
  }

  private async answerDuplicates(
    trx: Kysely<Database>,
    jobs: ReserveJob[],
    indexes: number[],
    outcomes: BatchOutcome<PendingPayout>[],
  ): Promise<void> {
    const rows = await transferKeysOf(trx, [...new Set(indexes.map((i) => jobs[i]!.request.clientTxId))])
    for (const i of indexes) {
      const job = jobs[i]!
      const original = rows.find((r) => r.partner_id === job.partnerId && r.client_tx_id === job.request.clientTxId)
      if (!original) {
        // The first request with this key in the same batch was refused; so is this one.
        const first = outcomes.find((o, j) => j !== i && o && !o.ok && jobs[j]!.request.clientTxId === job.request.clientTxId)
        outcomes[i] = first ?? { ok: false, error: Invalid.field('clientTxId', 'the request with this key was refused') }
        continue
      }
      outcomes[i] = {
        ok: false,
        error: new Conflict('duplicate transaction: this clientTxId was used within the duplicate window', [
          { field: 'clientTxId', message: 'already used', tx_id: original.tx_id },
        ]),
      }
    }
  }

  private async settleBatch(jobs: Array<{ payout: PendingPayout; outcome: RailOutcome }>): Promise<BatchOutcome<SettledStatus>[]> {
    return this.db.transaction().execute(async (trx) => {
      const batch = await LedgerBatch.open(trx, this.clock, jobs.map((j) => j.payout.account_id))
      // A clearing run recovers an RTC still Pending a minute after it was taken, so a slow
      // rail call may find its payout already settled. Every status change happens under the
      // account lock, so this read is final: a payout no longer Pending is answered with the
      // status it has (the rail's answer is the same for the same tx_id), never settled twice.
      const current = await statusesUnderLock(trx, jobs.map((j) => j.payout.tx_id))
      const outcomes = jobs.map(({ payout, outcome }) => {
        const status = current.get(payout.tx_id)?.status
        assert(status !== undefined, `payout ${payout.tx_id} has no transaction row`)
        if (status !== 'Pending') return { ok: true as const, value: status === 'Reversed' ? ('Successful' as const) : status }
        return { ok: true as const, value: settlePayout(batch, payout, outcome) }
      })
      await batch.flush()
      return outcomes
    })
  }
}

/** Holds amount + fee and writes the Pending rows; undefined when available is short. */
function reserve(batch: LedgerBatch, job: ReserveJob): PendingPayout | undefined {
  const { request } = job
  const amount = BigInt(request.amount)
  const total = amount + job.fee
  if (!batch.tryHold(request.account_id, total)) return undefined
  const recipient = {
    ref: request.ref,
    own_ref: request.own_ref,
    recipient_name: request.name,
    recipient_account: request.account_number,
    recipient_branch: request.branch_code,
  }
  batch.append({
    id: job.txId,
    account_id: request.account_id,
    tx_type: 'transfer',
    tx_payment_type: job.paymentType,
    status: 'Pending',
    amount,
    fee: job.fee,
    credit: 0n,
    debit: amount,
    hold_amount: total,
    added_by: job.addedBy,
    posted: false,
    ...recipient,
  })
  if (job.feeTxId) {
    batch.append({
      id: job.feeTxId,
      account_id: request.account_id,
      parent_tx_id: job.txId,
      tx_type: 'fee',
      tx_payment_type: job.paymentType,
      status: 'Pending',
      amount: job.fee,
      credit: 0n,
      debit: job.fee,
      added_by: job.addedBy,
      posted: false,
      ref: `${job.paymentType} fee`,
    })
  }
  return {
    tx_id: job.txId,
    fee_tx_id: job.feeTxId,
    account_id: request.account_id,
    payment_type: job.paymentType,
    amount,
    fee: job.fee,
    hold_amount: total,
  }
}

