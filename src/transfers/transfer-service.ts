import { sql, type Kysely, type RawBuilder } from 'kysely'
import { isDatabaseUnavailable } from '../db/errors.ts'
import { inLane, Lane } from '../db/prepared.ts'
import type { Caller } from '../auth/credential-store.ts'
import type { SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { assert, BankError, Conflict, Invalid, NotFound, Unavailable } from '../errors.ts'
import { GroupCommitter, isRetryableDatabaseError, type BatchOutcome } from '../ledger/group-committer.ts'
import { GuardFailed, LedgerBatch, StaleAccounts, type FlushGuard } from '../ledger/ledger-batch.ts'
import { KnownAccounts } from '../ledger/known-accounts.ts'
import { known_accounts_default } from '../ledger/ledger-limits.ts'
import { PartnerDebts } from '../ledger/partner-debt.ts'
import { statusesUnderLock } from '../ledger/ledger-store.ts'
import type { Rail, RailOutcome } from '../rails/rail.ts'
import type { PaymentAdvices } from './payment-advice.ts'
import { accountsOf, payInternal, reservePayout, type InternalJob, type InternalPaid, type PaymentJob, type PayoutJob } from './payment-jobs.ts'
import { settlePayout, type PendingPayout, type SettledStatus } from './settlement.ts'
import type { InternalTransferRequest, TransferRequest, TransferResult } from './transfer-contract.ts'
import { checkPaymentLimit, type PaymentType } from './transfer-limits.ts'
import { claimTransferKeys, insertKeysStatement, isKeyTaken, liveKeysStatement, releaseTransferKeys, transferKeysOf, type PaymentAdviceRow, type TransferKey } from './transfer-store.ts'
import { newRowId } from '../ledger/row-id.ts'

// Single payments (RULINGS, Accounts and the ledger). A payout to another bank is taken
// in two steps:
//  1. reserve: in one database transaction with others (group commit), claim the
//     clientTxId, check available ≥ amount + fee in request order, hold it, and write
//     the Pending transfer and fee rows;
//  2. settle: RTC goes to the rail at once and is captured or released in a second
//     grouped transaction; EFT waits for the clearing cycle (clearing-service.ts).
// A crash between the two leaves a Pending RTC with its hold, which the clearing run
// resolves by asking the rail again (its answer is idempotent by tx_id).
// An internal payment (to another account of this bank) needs no rail: it is taken and
// posted in full in step 1, both accounts locked in the same batch (payment-jobs.ts).
// Both kinds share the clientTxId keys, so a key used for one is a duplicate for the other.

export { limits } from './transfer-limits.ts'
export type { TransferResult }

export interface TransferSettings {
  fees: Record<PaymentType, bigint>
  keyWindowMs: number
  batchJobsMax: number
  batchesInFlightMax: number
  /** Payouts that must wait before a batch starts beside one being written (group-committer.ts). */
  batchOverlapJobsMin?: number
  /**
   * Reserve batches of one account written at once (1, the default, or 2): with 2, the
   * next batch of an account being written starts beside it (see reserveBatch).
   */
  accountBatchesMax?: number
  queueJobsMax: number
  /** Told of every ledger batch written, by committer (`reserve`, `settle`): the metrics. */
  observeBatch?: (committer: string, size: number, seconds: number, ok: boolean) => void
  /** What reserve batches remember of their accounts, shared with the other writers that forget what they change. */
  known?: KnownAccounts
  /** Told how each reserve batch read its accounts (known-accounts.ts): the metrics. */
  observeStart?: (start: 'remembered' | 'locked' | 'stale') => void
}

/** Finds a payee by account number, in any partner (the caller learns only that it exists). */
export interface PayeeDirectory {
  accountIdByNumber(accountNumber: string): Promise<string | undefined>
}

type Taken = PendingPayout | InternalPaid

const overloaded = () => new Unavailable('the bank is busy; try again shortly')

const noSuchPayee = () => {
  const message = 'no account of this bank has that account_number'
  return new BankError('not_found', message, [{ field: 'account_number', message }])
}

export class TransferService {
  private readonly reserver: GroupCommitter<PaymentJob, Taken>
  private readonly settler: GroupCommitter<{ payout: PendingPayout; outcome: RailOutcome }, SettledStatus>
  /**
   * The paying accounts as this instance's last reserve batches left them: a batch whose
   * accounts are all here is one statement (its write checks them), not two.
   */
  private readonly known: KnownAccounts
  /** The lane of the last reserve batch started for each account still being written (reserveBatch). */
  private readonly lanes = new Map<string, Lane>()
  private readonly overlapsAccounts: boolean

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly calendar: SouthAfricanCalendar,
    private readonly rail: Rail,
    private readonly payees: PayeeDirectory,
    private readonly advices: PaymentAdvices,
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
    this.known = settings.known ?? new KnownAccounts(known_accounts_default)
    this.overlapsAccounts = (settings.accountBatchesMax ?? 1) > 1
    const observe = settings.observeBatch
    this.reserver = new GroupCommitter((jobs) => this.reserveBatch(jobs), {
      ...options,
      // Payouts (measured by the bench): a second batch only beside enough waiting. RTC
      // settlements, fewer and each after a rail call, still start as they come.
      overlap_jobs_min: settings.batchOverlapJobsMin,
      keysOf: accountsOf,
      key_batches_max: settings.accountBatchesMax ?? 1,
      ...(observe ? { observe: (size: number, seconds: number, ok: boolean) => observe('reserve', size, seconds, ok) } : {}),
    })
    this.settler = new GroupCommitter((jobs) => this.settleBatch(jobs), {
      ...options,
      keysOf: (job) => [job.payout.account_id],
      ...(observe ? { observe: (size: number, seconds: number, ok: boolean) => observe('settle', size, seconds, ok) } : {}),
    })
  }

  async transfer(caller: Caller, request: TransferRequest): Promise<TransferResult> {
    const paymentType: 'RTC' | 'EFT' = request.pay_and_clear ? 'RTC' : 'EFT'
    const amount = BigInt(request.amount)
    checkPaymentLimit(this.calendar, this.clock.now(), paymentType, amount)
    // Object.assign, not a spread: properties added to a spread copy cost microseconds each.
    const job: PayoutJob = Object.assign(this.jobBase(caller, request, paymentType), {
      kind: 'payout' as const,
      paymentType,
      branch_code: request.branch_code,
    })
    const taken = await this.reserver.submit(job)
    assert(taken.payment_type !== 'INTERNAL', 'a payout is reserved as a payout')
    if (paymentType === 'EFT') return { tx_id: taken.tx_id, amount: String(request.amount), status: 'Pending' }
    const outcome = await this.rail.payRealTime({
      tx_id: taken.tx_id,
      payment_type: 'RTC',
      amount: taken.amount,
      account_number: request.account_number,
      branch_code: request.branch_code,
      name: request.name,
      ref: request.ref,
    })
    const status = await this.settler.submit({ payout: taken, outcome })
    return { tx_id: taken.tx_id, amount: String(request.amount), status }
  }

  /**
   * Pays another account of this bank, found by its account number (RULINGS,
   * Compatibility): instant, so the RTC limits by SAST time apply; fee and idempotency as
   * for any transfer.
   */
  async transferInternal(caller: Caller, request: InternalTransferRequest): Promise<TransferResult> {
    checkPaymentLimit(this.calendar, this.clock.now(), 'INTERNAL', BigInt(request.amount))
    const payeeAccountId = await this.payees.accountIdByNumber(request.account_number)
    if (!payeeAccountId) throw noSuchPayee()
    const base = this.jobBase(caller, request, 'INTERNAL')
    const job: InternalJob = Object.assign(base, {
      kind: 'internal' as const,
      payeeAccountId,
      payeeTxId: newRowId(),
      feeTxId: base.fee > 0n ? newRowId() : null,
    })
    const taken = await this.reserver.submit(job)
    return { tx_id: taken.tx_id, amount: String(request.amount), status: 'Successful' }
  }

  private jobBase(caller: Caller, request: TransferRequest | InternalTransferRequest, paymentType: PaymentType) {
    const fee = this.settings.fees[paymentType]
    return {
      partnerId: caller.partnerId as string,
      addedBy: caller.credentialId,
      accountId: request.account_id,
      clientTxId: request.clientTxId,
      amount: BigInt(request.amount),
      fee,
      txId: newRowId(),
      ref: request.ref,
      own_ref: request.own_ref,
      name: request.name,
      account_number: request.account_number,
      advice: request.notification_email ? { email: request.notification_email, name: request.notification_name ?? '' } : undefined,
    }
  }

  /**
   * A reserve batch. With accountBatchesMax 2, a batch may start while another of this
   * instance writes one of its accounts (a hot account's next batch): it starts from the
   * state that batch will leave, remembered as that batch's write went out (takeReserve),
   * and is written behind it on the same connection (prepared.ts, lanes), so PostgreSQL
   * runs it once that one has committed. Should that one fail, or not have sent its commit
   * yet when this one is ready (it then ends first, and this one takes a connection of its
   * own), this one finds the account as it is, or stale: its own race, not another
   * writer's, so the account is not paused and the guess not counted against guessing.
   */
  private async reserveBatch(jobs: PaymentJob[]): Promise<BatchOutcome<Taken>[]> {
    const accountIds = [...new Set(jobs.flatMap(accountsOf))]
    let ahead: Lane | undefined
    for (const id of accountIds) ahead ??= this.lanes.get(id)
    const lane = new Lane()
    for (const id of accountIds) this.lanes.set(id, lane)
    try {
      return await inLane(lane, ahead, () => this.reserveBatchOnce(jobs, ahead !== undefined))
    } finally {
      lane.close()
      for (const id of accountIds) if (this.lanes.get(id) === lane) this.lanes.delete(id)
    }
  }

  /**
   * Most batches repeat no key, so the keys are claimed in the batch's one write, on the
   * condition that every key is new and no key of a request refused for funds is live (a
   * repeated request is answered as a duplicate, whatever its funds). A batch that finds
   * a key taken is rolled back whole and written again claiming its keys first: one
   * round trip fewer for every batch, one more for the rare batch with a repeat. A batch
   * that started from remembered accounts and found one changed is written again with its
   * accounts locked and read first (known-accounts.ts).
   */
  private async reserveBatchOnce(jobs: PaymentJob[], behind: boolean): Promise<BatchOutcome<Taken>[]> {
    try {
      return await this.writeReserve(jobs, 'claim-in-write', true, behind)
    } catch (error) {
      if (!(error instanceof GuardFailed)) throw error
      if (error instanceof StaleAccounts) {
        // A remembered account had changed: written again with its accounts locked and read
        // first, still claiming the keys in the write.
        if (!behind) this.known.pause(jobs.flatMap(accountsOf))
        this.settings.observeStart?.('stale')
        try {
          return await this.writeReserve(jobs, 'claim-in-write', false)
        } catch (again) {
          if (!(again instanceof GuardFailed)) throw again
        }
      }
      // A key taken: written again claiming the keys first.
      return this.writeReserve(jobs, 'claim-first')
    }
  }

  private async writeReserve(
    jobs: PaymentJob[],
    mode: 'claim-in-write' | 'claim-first',
    guess = true,
    behind = false,
  ): Promise<BatchOutcome<Taken>[]> {
    const outcomes: BatchOutcome<Taken>[] = new Array(jobs.length)
    const duplicates: number[] = []
    const accountIds = jobs.flatMap(accountsOf)
    // A batch with an internal payment may lock its payees' partner debts (partner-debt.ts),
    // which every path locks after the accounts: so it locks its accounts first, not in its write.
    const guessable = guess && mode === 'claim-in-write' && !jobs.some((job) => job.kind === 'internal')
    let written: LedgerBatch | undefined
    try {
      await this.db.transaction().execute(async (trx) => {
        const batch =
          (guessable ? LedgerBatch.fromKnown(trx, this.clock, accountIds, this.known) : undefined) ??
          (await LedgerBatch.open(trx, this.clock, accountIds))
        written = batch
        if (guess && mode === 'claim-in-write') this.settings.observeStart?.(batch.guessed ? 'remembered' : 'locked')
        await this.takeReserve(trx, batch, jobs, mode, outcomes, duplicates)
      })
    } catch (error) {
      this.known.forget(accountIds)
      if (written?.guessed && !behind) this.known.guessed(error instanceof StaleAccounts)
      // A key taken, found by the write's plain insert: as a failed guard (written again claiming first).
      throw isKeyTaken(error) && mode === 'claim-in-write' ? new GuardFailed('a key of the batch is taken') : error
    }
    if (written!.guessed) this.known.guessed(false)
    this.known.remember(written!.accountStates())
    return outcomes
  }

  private async takeReserve(
    trx: Kysely<Database>,
    batch: LedgerBatch,
    jobs: PaymentJob[],
    mode: 'claim-in-write' | 'claim-first',
    outcomes: BatchOutcome<Taken>[],
    duplicates: number[],
  ): Promise<void> {
    // A payee's partner that owes the bank (a disputed debit order's shortfall) pays it
    // from the credit first (partner-debt.ts); only batches with internal payments ask.
    const payees = jobs.flatMap((job) => (job.kind === 'internal' && batch.has(job.payeeAccountId) ? [batch.account(job.payeeAccountId).partner_id] : []))
    const debts = payees.length > 0 ? await PartnerDebts.open(trx, payees, batch.now) : undefined
    // The first job with a key in this batch claims it; a repeat waits for its result below.
    const firstWithKey = new Map<string, number>()
    const claimants: number[] = []
    jobs.forEach((job, i) => {
      const refusal = refusalOf(batch, job)
      if (refusal) {
        outcomes[i] = { ok: false, error: refusal }
        return
      }
      const key = `${job.partnerId}/${job.clientTxId}`
      if (firstWithKey.has(key)) duplicates.push(i)
      else {
        firstWithKey.set(key, i)
        claimants.push(i)
      }
    })
    const claimed = mode === 'claim-first' ? await this.claimKeys(trx, claimants.map((i) => jobs[i]!), batch.now) : undefined
    const taking: PaymentJob[] = []
    const released: PaymentJob[] = []
    const advices: PaymentAdviceRow[] = []
    const paidNow: string[] = []
    for (const i of claimants) {
      const job = jobs[i]!
      if (claimed && !claimed.has(job.txId)) {
        duplicates.push(i)
        continue
      }
      const taken = job.kind === 'internal' ? payInternal(batch, job) : reservePayout(batch, job)
      if (!taken) {
        outcomes[i] = { ok: false, error: Invalid.field('amount', 'insufficient funds: available balance does not cover amount plus fee') }
        released.push(job)
        continue
      }
      taking.push(job)
      outcomes[i] = { ok: true, value: taken }
      if (job.kind === 'internal' && debts) debts.recover(batch, job.payeeAccountId, batch.account(job.payeeAccountId).partner_id, job.payeeTxId)
      if (job.advice) advices.push({ tx_id: job.txId, partner_id: job.partnerId, ...job.advice, created_at: batch.now })
      if (taken.payment_type === 'INTERNAL') paidNow.push(taken.tx_id)
    }
    // A request refused for funds moved no money, so its key may be used again.
    if (claimed) await releaseTransferKeys(trx, released.map((j) => j.txId))
    // Most batches end with their write: its commit is sent with it (one round trip).
    const last = !debts && advices.length === 0 && paidNow.length === 0 && duplicates.length === 0
    // The state this batch will leave, remembered as its write goes out, so that the next
    // batch of its accounts may start from it behind this one (reserveBatch); forgotten if
    // this one fails (writeReserve).
    if (this.overlapsAccounts && !claimed) this.known.remember(batch.accountStates())
    await batch.flush(claimed ? undefined : this.keyGuard(taking, released, batch.now), { commit: last })
    if (last) return
    await debts?.flush()
    // Advices commit with their payments; an internal payment is Successful already.
    await this.advices.record(trx, advices)
    await this.advices.paid(trx, paidNow)
    // Inside the transaction: should the batch be retried, it must not find its own keys.
    if (duplicates.length > 0) await this.answerDuplicates(trx, jobs, duplicates, outcomes, batch.now)
  }

  /**
   * What a batch that claims its keys in its write adds to it: the keys of the requests that
   * take money, inserted plainly (a key already there, live or expired, fails the statement:
   * isKeyTaken), and the condition that no key of a request refused for funds is live.
   */
  private keyGuard(taking: PaymentJob[], refused: PaymentJob[], now: Date): FlushGuard {
    const queries: RawBuilder<unknown>[] = taking.length > 0 ? [sql`k as (${insertKeysStatement(keysOf(taking), now)})`] : []
    if (refused.length === 0) return { queries }
    queries.push(sql`r as (${liveKeysStatement(keysOf(refused), this.keyCutoff(now))})`)
    return { queries, holds: sql`not exists (select 1 from r)` }
  }

  /** A key used before this no longer counts: the duplicate window (configurable, 24 h by default). */
  private keyCutoff(now: Date): Date {
    return new Date(now.getTime() - this.settings.keyWindowMs)
  }

  /** Claims each job's key; returns the tx ids whose key was new (the others are duplicates). */
  private claimKeys(trx: Kysely<Database>, jobs: PaymentJob[], now: Date): Promise<Set<string>> {
    const cutoff = this.keyCutoff(now)
    return claimTransferKeys(trx, keysOf(jobs), now, cutoff)
  }

  private async answerDuplicates(
    trx: Kysely<Database>,
    jobs: PaymentJob[],
    indexes: number[],
    outcomes: BatchOutcome<Taken>[],
    now: Date,
  ): Promise<void> {
    const cutoff = this.keyCutoff(now)
    const rows = await transferKeysOf(trx, [...new Set(indexes.map((i) => jobs[i]!.clientTxId))], cutoff)
    for (const i of indexes) {
      const job = jobs[i]!
      const original = rows.find((r) => r.partner_id === job.partnerId && r.client_tx_id === job.clientTxId)
      if (!original) {
        // The first request with this key in the same batch was refused; so is this one.
        const first = outcomes.find((o, j) => j !== i && o && !o.ok && jobs[j]!.clientTxId === job.clientTxId)
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
    // A settlement changes the accounts' holds: what reserve batches remember of them is stale
    // (forgotten before, and again after, in case a reserve batch remembered them meanwhile).
    const accountIds = jobs.map((j) => j.payout.account_id)
    this.known.forget(accountIds)
    try {
      return await this.settleUnderLock(jobs)
    } finally {
      this.known.forget(accountIds)
    }
  }

  private async settleUnderLock(jobs: Array<{ payout: PendingPayout; outcome: RailOutcome }>): Promise<BatchOutcome<SettledStatus>[]> {
    return this.db.transaction().execute(async (trx) => {
      const batch = await LedgerBatch.open(trx, this.clock, jobs.map((j) => j.payout.account_id))
      // A clearing run recovers an RTC still Pending a minute after it was taken, so a slow
      // rail call may find its payout already settled. Every status change happens under the
      // account lock, so this read is final: a payout no longer Pending is answered with the
      // status it has (the rail's answer is the same for the same tx_id), never settled twice.
      const current = await statusesUnderLock(trx, jobs.map((j) => j.payout.tx_id))
      const succeeded: string[] = []
      const outcomes = jobs.map(({ payout, outcome }) => {
        const status = current.get(payout.tx_id)?.status
        assert(status !== undefined, `payout ${payout.tx_id} has no transaction row`)
        if (status !== 'Pending') return { ok: true as const, value: status === 'Reversed' ? ('Successful' as const) : status }
        const settled = settlePayout(batch, payout, outcome)
        if (settled === 'Successful') succeeded.push(payout.tx_id)
        return { ok: true as const, value: settled }
      })
      await batch.flush()
      await this.advices.paid(trx, succeeded)
      return outcomes
    })
  }
}

function keysOf(jobs: PaymentJob[]): TransferKey[] {
  return jobs.map((j) => ({ partner_id: j.partnerId, client_tx_id: j.clientTxId, tx_id: j.txId }))
}

/** Why a job cannot be taken at all, checked under the batch's locks; undefined when it can. */
function refusalOf(batch: LedgerBatch, job: PaymentJob): BankError | undefined {
  // Another partner's account is answered exactly as a missing one (RULINGS, Tenancy).
  if (!batch.has(job.accountId) || batch.account(job.accountId).partner_id !== job.partnerId) return new NotFound('account')
  if (job.kind !== 'internal') return undefined
  // Checked only once the paying account is known to be the caller's, so that this answer
  // tells nothing about another partner's account.
  if (job.payeeAccountId === job.accountId) {
    return Invalid.field('account_number', 'is the paying account itself: an internal payment goes to another account')
  }
  return batch.has(job.payeeAccountId) ? undefined : noSuchPayee()
}
