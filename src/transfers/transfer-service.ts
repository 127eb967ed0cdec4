import type { Kysely } from 'kysely'
import { creditRefusal, debitRefusal } from '../ledger/account-status.ts'
import type { Caller } from '../auth/credential-store.ts'
import type { SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { isDatabaseUnavailable } from '../db/errors.ts'
import type { Logger } from '../logger.ts'
import { assert, BankError, Invalid, NotFound, type FieldIssue } from '../errors.ts'
import type { Journal } from '../ledger/journal.ts'
import type { LedgerWriter, PaymentKind, SettlementKind } from '../ledger/ledger-writer.ts'
import type { KeyOriginal } from '../ledger/payment-keys.ts'
import {
  accountsOf,
  payInternal,
  reservePayout,
  settlePayout,
  type InternalJob,
  type InternalPaid,
  type PaymentJob,
  type PayoutJob,
  type PendingPayout,
  type SettledStatus,
} from '../ledger/payment-journals.ts'
import { newRowId } from '../ledger/row-id.ts'
import type { RailOutcome, RailPayment } from '../rails/rail.ts'
import type { PaymentAdvices } from './payment-advice.ts'
import type { PayoutScreening } from './payout-screening.ts'
import type { CheckedSubject } from '../screening/screening-reviews.ts'
import type { PaymentAdviceRow } from './payment-advice-store.ts'
import type {
  InternalTransferRequest,
  TransferRequest,
  TransferResult,
} from './transfer-contract.ts'
import { checkPaymentLimit, type PaymentType } from './transfer-limits.ts'

// Single payments. A payout to another bank is taken in two steps, each a journal the
// ledger writer batches with others (ledger/ledger-writer.ts, ledger/payment-journals.ts):
//  1. reserve: claim the clientTxId, check available ≥ amount + fee in request order, hold
//     it, and write the Pending transfer row;
//  2. settle: RTC goes to the clearing house's gateway at once (its own pacs.008) and is
//     captured or released by a settlement when the answer comes within the bound; EFT
//     waits for the clearing cycle (clearing-service.ts).
// An RTC without an answer in time (or after a crash between the two) stays Pending with its
// hold; the RTC recovery asks the gateway for its status (pacs.028) and settles it then.
// An internal payment (to another account of this bank) needs no rail: it is taken and
// posted in full in step 1, both accounts locked in the same batch (ledger/payment-journals.ts).
// Both kinds share the clientTxId keys, so a key used for one is a duplicate for the other.
// A payout's recipient is screened against the sanctions lists before step 1; a hit is held
// in review with the payment, which stays Pending and is not sent until it is decided
// (payout-screening.ts).

export { limits } from './transfer-limits.ts'
export type { TransferResult }

export interface TransferSettings {
  fees: Record<PaymentType, bigint>
  /**
   * An RTC's settlement the database could not take (away, disk full) is written again
   * after these waits (real time), until it is written or `until_ms` has passed (the RTC
   * recovery job takes it from there).
   */
  settleRetry?: { first_ms: number; max_ms: number; until_ms: number }
  log?: Pick<Logger, 'warn'>
}

export const rtc_settle_retry_default = { first_ms: 100, max_ms: 2_000, until_ms: 5 * 60_000 }

/**
 * Pays an RTC through the rail: its outcome, or undefined while the clearing house has not
 * answered (clearing-service.ts payRealTime).
 */
export type RealTimePayer = (accountId: string, payment: RailPayment) =>
  Promise<RailOutcome | undefined>

/** Finds a payee by account number, in any partner (the caller learns only that it exists). */
export interface PayeeDirectory {
  accountIdByNumber(accountNumber: string): Promise<string | undefined>
}

type Taken = PendingPayout | InternalPaid

/**
 * A payment as transfers ask the ledger to take it: its journal, and the advice its recipient asked
 * for.
 */
type Payment = PaymentJob & {
  advice: { email: string; name: string } | undefined
  /** A payout whose recipient hit the sanctions lists: its review, held with it. */
  screened?: CheckedSubject
}

interface Settlement {
  payout: PendingPayout
  outcome: RailOutcome
}

const noSuchPayee = () => {
  const message = 'no account of this bank has that account_number'
  return new BankError('not_found', message, [{ field: 'account_number', message }])
}

export class TransferService {
  private readonly reserver: { submit(payment: Payment): Promise<Taken> }
  private readonly settler: { submit(settlement: Settlement): Promise<SettledStatus> }

  constructor(
    private readonly clock: Clock,
    private readonly calendar: SouthAfricanCalendar,
    private readonly payRealTime: RealTimePayer,
    private readonly payees: PayeeDirectory,
    advices: PaymentAdvices,
    writer: LedgerWriter<Kysely<Database>>,
    private readonly settings: TransferSettings,
    private readonly screening: PayoutScreening,
  ) {
    this.reserver = writer.payments(paymentKind(advices, screening))
    this.settler = writer.settlements(settlementKind(advices))
  }

  async transfer(caller: Caller, request: TransferRequest): Promise<TransferResult> {
    const paymentType: 'RTC' | 'EFT' = request.pay_and_clear ? 'RTC' : 'EFT'
    const amount = BigInt(request.amount)
    checkPaymentLimit(this.calendar, this.clock.now(), paymentType, amount)
    // Object.assign, not a spread: properties added to a spread copy cost microseconds each.
    const job: Payment & PayoutJob = Object.assign(this.jobBase(caller, request, paymentType), {
      kind: 'payout' as const,
      paymentType,
      branch_code: request.branch_code,
    })
    // Screened before it is taken, outside any transaction (payout-screening.ts); a hit is
    // held in review with the payment, which stays Pending and is not sent.
    const screened = await this.screening.check(job.partnerId, job.accountId, job.txId,
      request.name)
    if (screened) job.screened = screened
    const taken = await this.reserver.submit(job)
    assert(taken.payment_type !== 'INTERNAL', 'a payout is reserved as a payout')
    const amountText = String(request.amount)
    const pending = { tx_id: taken.tx_id, amount: amountText, status: 'Pending' as const }
    if (paymentType === 'EFT' || screened) return pending
    const outcome = await this.payRealTime(taken.account_id, {
      tx_id: taken.tx_id,
      payment_type: 'RTC',
      amount: taken.amount,
      account_number: request.account_number,
      branch_code: request.branch_code,
      name: request.name,
      ref: request.ref,
    })
    // No answer within the bound: Pending until the RTC recovery learns the outcome.
    if (!outcome) return pending
    const status = await this.settle({ payout: taken, outcome })
    return { tx_id: taken.tx_id, amount: amountText, status }
  }

  /**
   * Writes an RTC's outcome. The payment is taken (its hold committed) and the clearing
   * house has answered: when the database cannot take the settlement now (away, its disk
   * full), the caller is told the payment is taken and Pending, with its tx_id, rather than
   * 503, and the settlement is written as soon as the database answers again.
   */
  private async settle(settlement: Settlement): Promise<SettledStatus | 'Pending'> {
    try {
      return await this.settler.submit(settlement)
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error
      this.settleWhenBack(settlement, Date.now())
      return 'Pending'
    }
  }

  /** Tries the settlement again, waiting longer each time, until written or given up. */
  private settleWhenBack(settlement: Settlement, since: number, waitMs?: number): void {
    const retry = this.settings.settleRetry ?? rtc_settle_retry_default
    const wait = waitMs ?? retry.first_ms
    setTimeout(() => {
      this.settler.submit(settlement).catch((error: unknown) => {
        const tx_id = settlement.payout.tx_id
        if (isDatabaseUnavailable(error) && Date.now() - since < retry.until_ms) {
          return this.settleWhenBack(settlement, since, Math.min(wait * 2, retry.max_ms))
        }
        // The RTC recovery job asks the clearing house again and settles it.
        this.settings.log?.warn({ err: error, tx_id }, 'rtc: settlement left to the recovery')
      })
    }, wait).unref()
  }

  /**
   * Pays another account of this bank, found by its account number
   * (docs/guides/payments.md): instant, so the RTC limits by SAST time apply; fee and
   * idempotency as for any transfer.
   */
  async transferInternal(
    caller: Caller,
    request: InternalTransferRequest,
  ): Promise<TransferResult> {
    checkPaymentLimit(this.calendar, this.clock.now(), 'INTERNAL', BigInt(request.amount))
    const payeeAccountId = await this.payees.accountIdByNumber(request.account_number)
    if (!payeeAccountId) throw noSuchPayee()
    const base = this.jobBase(caller, request, 'INTERNAL')
    const job: Payment & InternalJob = Object.assign(base, {
      kind: 'internal' as const,
      payeeAccountId,
      payeeTxId: newRowId(),
      feeTxId: base.fee > 0n ? newRowId() : null,
    })
    const taken = await this.reserver.submit(job)
    return { tx_id: taken.tx_id, amount: String(request.amount), status: 'Successful' }
  }

  private jobBase(
    caller: Caller,
    request: TransferRequest | InternalTransferRequest,
    paymentType: PaymentType,
  ) {
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
      advice: request.notification_email
        ? { email: request.notification_email, name: request.notification_name ?? '' }
        : undefined,
    }
  }
}

/** Payments as the ledger writer takes them: journals, keys, and advices committed with them. */
function paymentKind(advices: PaymentAdvices,
    screening: PayoutScreening): PaymentKind<Payment, Taken, Kysely<Database>> {
  return {
    name: 'reserve',
    accountsOf,
    keyOf: (job) => ({ partner_id: job.partnerId, client_tx_id: job.clientTxId, tx_id: job.txId }),
    differences,
    refusal: refusalOf,
    take: (batch, job) => {
      return job.kind === 'internal' ? payInternal(batch, job) : reservePayout(batch, job)
    },
    creditOf: (job) => {
      if (job.kind !== 'internal') return undefined
      return { account: job.payeeAccountId, tx_id: job.payeeTxId }
    },
    // Advices and screening reviews commit with their payments; an internal payment is
    // Successful already.
    alongside: (taken, now) => {
      const rows: PaymentAdviceRow[] = []
      const paidNow: string[] = []
      const held: CheckedSubject[] = []
      for (const { payment, value } of taken) {
        const { txId: tx_id, partnerId: partner_id, advice } = payment
        if (advice) rows.push({ tx_id, partner_id, ...advice, created_at: now })
        if (value.payment_type === 'INTERNAL') paidNow.push(value.tx_id)
        if (payment.screened) held.push(payment.screened)
      }
      if (rows.length === 0 && paidNow.length === 0 && held.length === 0) return undefined
      return async (trx) => {
        await advices.record(trx, rows)
        await advices.paid(trx, paidNow)
        await screening.hold(trx, held)
      }
    },
  }
}

/** An RTC's rail answer, settled by the ledger writer (one settled meanwhile: as it stands). */
function settlementKind(
  advices: PaymentAdvices,
): SettlementKind<Settlement, SettledStatus, Kysely<Database>> {
  return {
    name: 'settle',
    accountOf: (s) => s.payout.account_id,
    txOf: (s) => s.payout.tx_id,
    settle: (batch, s) => settlePayout(batch, s.payout, s.outcome),
    // Settled already by a clearing run's recovery: answered with the status it has.
    settled: (status) => (status === 'Reversed' ? 'Successful' : (status as SettledStatus)),
    alongside: (settled) => {
      const paid = settled.filter((s) => s.value === 'Successful')
      const txIds = paid.map((s) => s.settlement.payout.tx_id)
      return txIds.length === 0 ? undefined : (trx) => advices.paid(trx, txIds)
    },
  }
}

/** Why a job cannot be taken at all, checked under the batch's locks; undefined when it can. */
function refusalOf(batch: Journal, job: PaymentJob): BankError | undefined {
  // Another partner's account is answered exactly as a missing one (404).
  if (!batch.has(job.accountId) || batch.account(job.accountId).partner_id !== job.partnerId)
    return new NotFound('account')
  const notActive = debitRefusal(batch, job.accountId)
  if (notActive) return notActive
  if (job.kind !== 'internal') return undefined
  // Checked only once the paying account is known to be the caller's, so that this answer
  // tells nothing about another partner's account.
  if (job.payeeAccountId === job.accountId) {
    return Invalid.field(
      'account_number',
      'is the paying account itself: an internal payment goes to another account',
    )
  }
  if (!batch.has(job.payeeAccountId)) return noSuchPayee()
  return creditRefusal(batch, job.payeeAccountId)
}

const paymentTypeNames: Record<string, string> =
  { EFT: 'an EFT', RTC: 'an RTC', INTERNAL: 'an internal payment' }

/**
 * How a repeated clientTxId's request differs from the one that used it first, as its
 * transaction recorded it (each field under its request name): none for a retry. The payment
 * advice (`notification_email`, `notification_name`) is not the payment and is not compared.
 */
function differences(job: PaymentJob, original: KeyOriginal): FieldIssue[] {
  const issues: FieldIssue[] = []
  const differs = (field: string, was: string) =>
    issues.push({ field, message: `differs from the original request's: ${was}` })
  const type = job.kind === 'internal' ? 'INTERNAL' : job.paymentType
  if (type !== original.tx_payment_type) {
    const was = paymentTypeNames[original.tx_payment_type] ?? original.tx_payment_type
    const field = job.kind === 'payout' && original.tx_payment_type !== 'INTERNAL'
      ? 'pay_and_clear' : 'clientTxId'
    issues.push({ field, message: `the original request was ${was}` })
  }
  if (job.accountId !== original.account_id) differs('account_id', original.account_id)
  if (job.amount !== original.amount) differs('amount', String(original.amount))
  const texts: Array<[string, string, string]> = [
    ['ref', job.ref, original.ref],
    ['own_ref', job.own_ref, original.own_ref],
    ['name', job.name, original.recipient_name],
    ['account_number', job.account_number, original.recipient_account],
  ]
  if (job.kind === 'payout' && original.tx_payment_type !== 'INTERNAL') {
    texts.push(['branch_code', job.branch_code, original.recipient_branch])
  }
  for (const [field, now, was] of texts) if (now !== was) differs(field, JSON.stringify(was))
  return issues
}
