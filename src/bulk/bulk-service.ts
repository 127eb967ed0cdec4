import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { isUniqueViolation } from '../db/errors.ts'
import type { Database } from '../schema.ts'
import { assert, BankError, Forbidden, InsufficientFunds, Invalid, InvalidState, LimitExceeded, NotFound, TooManyAttempts, Unavailable, type FieldIssue } from '../errors.ts'
import { appendEvent } from '../events/index.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import { debitRefusal } from '../ledger/account-status.ts'
import { cents } from '../ledger/cents.ts'
import type { JournalKind } from '../ledger/journal-kind.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import type { Notifier } from '../notify/notifier.ts'
import { formatRand } from '../transfers/payment-advice.ts'
import { checkPaymentLimit, type PaymentType } from '../transfers/transfer-limits.ts'
import { checkEndpointUrl } from '../webhooks/url-policy.ts'
import { bulk_limits, type BulkInitiateRequest } from './bulk-contract.ts'
import { entity_limits_default, lockEntity, pendingBatchesRefusal, pinBudgetRefusal, recordWrongPin, type EntityLimits } from './bulk-entity-limits.ts'
import { fundingCapture, fundingRelease, holdFunding, type FundingPlan } from '../ledger/bulk-journals.ts'
import { newOtp, newOtpReference, otpHash, otpMatches, otpMessage } from './bulk-otp.ts'
import { bulk_process_job_kind } from './bulk-processing.ts'
import {
  batchesById,
  batchForUpdate,
  batchOf,
  insertBatch,
  itemsOf,
  setAllItems,
  updateBatch,
  type BatchRow,
} from './bulk-store.ts'
import { batchView } from './bulk-view.ts'
import { duplicateOf, repeatOf } from './bulk-repeat.ts'
import { bulk_otp_expiry_job_limits } from './bulk-limits.ts'

// The four partner operations of bulk payments and the sandbox's OTP look-up
// (docs/guides/bulk-payments.md). A batch lives in `pending_otp` from initiate until verify,
// cancel, its third wrong PIN or its PIN's expiry; verify funds it and hands it to the
// processing jobs (bulk-processing.ts). Every change of a batch happens under its row lock,
// with its event in the same transaction. An entity's wrong PINs and waiting batches are
// bounded across its batches (bulk-entity-limits.ts).

export const bulk_otp_expiry_job_kind = 'bulk.otp_expiry'

export interface BulkSettings {
  fees: Record<PaymentType, bigint>
  /** HMAC key of the one-time PINs (BANK_OTP_KEY, or derived from the bank's secrets key). */
  otpKey: Buffer
  /**
   * Sandbox mode: keep the PIN readable for `ops.sandbox.otp`; never in production. It is
   * also the webhook URL policy's mode for `callback_url`, as at delivery.
   */
  sandbox: boolean
  /** The per-entity limits (bulk-entity-limits.ts); its default numbers when not given. */
  entityLimits?: EntityLimits | undefined
}

/** What bulk payments need to know of entities and accounts, through their services. */
export interface BulkDirectory {
  /** The entity's registered e-mail (NotFound when not the partner's). */
  entityEmail(partnerId: string, entityId: string): Promise<string>
  /** The entity's accounts, oldest first. */
  accountIdsOf(entityId: string): Promise<string[]>
}

const otpExpired = () => new BankError('otp_expired',
  'the one-time PIN has expired; the batch has ended failed and its hold is released')
const lockedOut = () => new TooManyAttempts(
  `${bulk_limits.otp_attempts_max} wrong one-time PINs were given; the batch has ended failed`)

export class BulkService {
  private readonly otpKey: Buffer
  private readonly entityLimits: EntityLimits

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly ledger: ComposedWriter,
    private readonly calendar: SouthAfricanCalendar,
    private readonly jobs: JobRunner,
    private readonly notifier: Notifier,
    private readonly directory: BulkDirectory,
    private readonly settings: BulkSettings,
  ) {
    this.otpKey = settings.otpKey
    this.entityLimits = settings.entityLimits ?? entity_limits_default
    jobs.register({
      kind: bulk_otp_expiry_job_kind,
      ...bulk_otp_expiry_job_limits,
      run: async (job) => ({ expired: await this.expire(String(job.payload.batch_id)) }),
    })
  }

  async initiate(caller: Caller, entityId: string, request: BulkInitiateRequest) {
    const partnerId = caller.partnerId as string
    const now = this.clock.now()
    const plan = this.checkBatch(request, now)
    if (request.callback_url !== undefined) await this.checkCallbackUrl(request.callback_url)
    const email = await this.directory.entityEmail(partnerId, entityId)
    const accountId = await this.payingAccount(entityId, request.account_id)
    // Refused early and without locks; the unique index decides between concurrent twins.
    const repeat = { entityId, accountId }
    const taken = await batchOf(this.db, partnerId, request.bulk_payment_id)
    if (taken) throw repeatOf(request, repeat, taken, await itemsOf(this.db, taken.id))
    const otp = newOtp()
    const row = this.newBatchRow({ caller, entityId, accountId, request, plan, otp, now })
    const funding: FundingPlan = {
      funding_tx_id: row.funding_tx_id, account_id: accountId,
      bulk_payment_id: request.bulk_payment_id, description: request.description,
      payment_count: request.payment_count, added_by: caller.credentialId, ...plan,
    }
    await this.recordBatch(row, request, funding, repeat)
    const expiresAt = row.otp_expires_at
    await this.sendOtp(row.id, email, { bulk_payment_id: request.bulk_payment_id,
      otp_reference: row.otp_reference, payment_count: request.payment_count,
      total: formatRand(plan.total), expires_at: expiresAt }, otp)
    return {
      bulk_payment_id: request.bulk_payment_id,
      status: 'pending_otp' as const,
      otp_reference: row.otp_reference,
      expires_at: formatTimestamp(expiresAt),
      total_amount: plan.total.toString(),
      payment_count: request.payment_count,
    }
  }

  /** A new batch's row, waiting for its one-time PIN (only the PIN's hash is kept). */
  private newBatchRow(b: {
    caller: Caller
    entityId: string
    accountId: string
    request: BulkInitiateRequest
    plan: ReturnType<BulkService['checkBatch']>
    otp: string
    now: Date
  }) {
    const { request, plan, otp, now } = b
    const id = randomUUID()
    return {
      id, partner_id: b.caller.partnerId as string, entity_id: b.entityId,
      account_id: b.accountId, bulk_payment_id: request.bulk_payment_id,
      description: request.description, callback_url: request.callback_url ?? null,
      status: 'pending_otp' as const, total_amount: plan.total, fee_total: plan.fees,
      payment_count: request.payment_count, funding_tx_id: randomUUID(),
      otp_hash: otpHash(this.otpKey, id, 1, otp), otp_number: 1,
      otp_sandbox: this.settings.sandbox ? otp : null, otp_reference: newOtpReference(),
      otp_expires_at: new Date(now.getTime() + bulk_limits.otp_ttl_ms),
      failure_reason: null, cancel_reason: null, added_by: b.caller.credentialId, created_at: now,
    }
  }

  /**
   * One transaction: the entity's pending batches counted under its lock, the funding held
   * through the ledger writer, the batch and its items written, and its PIN's expiry job.
   */
  private async recordBatch(
    row: ReturnType<BulkService['newBatchRow']>,
    request: BulkInitiateRequest,
    funding: FundingPlan,
    repeat: { entityId: string; accountId: string },
  ): Promise<void> {
    try {
      await this.db.transaction().execute(async (trx) => {
        await lockEntity(trx, row.entity_id)
        const limits = this.entityLimits
        const crowded = await pendingBatchesRefusal(trx, row.entity_id, row.created_at, limits)
        if (crowded) throw crowded
        await this.ledger.write(trx, fundingHold, { partner_id: row.partner_id, plan: funding })
        await insertBatch(trx, row, itemRows(row.id, request.payments, this.settings.fees))
        // The hold is released when the PIN expires, whether or not anyone calls again.
        await this.jobs.enqueue(trx, { kind: bulk_otp_expiry_job_kind, key: row.id,
          due_at: row.otp_expires_at, payload: { batch_id: row.id } })
      })
    } catch (error) {
      // A twin initiated at the same time won the unique index: compared with it once committed.
      if (!isUniqueViolation(error)) throw error
      const twin = await batchOf(this.db, row.partner_id, request.bulk_payment_id)
      throw twin ? repeatOf(request, repeat, twin, await itemsOf(this.db, twin.id))
        : duplicateOf(request.bulk_payment_id)
    }
  }

  /**
   * The PIN goes out after the batch has committed (the notifier writes on its own
   * connection). Should it fail to go, the batch could never be verified: it ends failed
   * at once and its hold is released.
   */
  private async sendOtp(batchId: string, to: string, about: Parameters<typeof otpMessage>[0],
      otp: string): Promise<void> {
    try {
      await this.notifier.send({ key: `bulk_otp:${batchId}:1`, to, ...otpMessage(about, otp) })
    } catch {
      await this.endPending(batchId, 'otp_not_sent')
      throw new Unavailable('the one-time PIN could not be sent; the batch has ended failed and ' +
        'its hold is released; try again with a new bulk_payment_id')
    }
  }

  /**
   * The batch's events go to `callback_url`, so it meets the webhook URL policy here, as an
   * endpoint does when it is set, in the bank's mode (production: https to public addresses
   * only; the sandbox also takes http and loopback). Delivery checks it again
   * (webhook-sender.ts), on the addresses its name has then.
   */
  private async checkCallbackUrl(url: string): Promise<void> {
    const refusal = await checkEndpointUrl(url, this.settings.sandbox)
    if (refusal) throw Invalid.field('callback_url', refusal)
  }

  /** Checks what the schema cannot: counts, sums, unique ids and each payment's limit. */
  private checkBatch(request: BulkInitiateRequest, now: Date): { total: bigint; fees: bigint;
      eft_total: bigint; rtc_total: bigint } {
    const issues: FieldIssue[] = []
    const overLimit: FieldIssue[] = []
    const seen = new Map<string, number>()
    let sum = 0n
    let fees = 0n
    let eft = 0n
    let rtc = 0n
    request.payments.forEach((p, i) => {
      const amount = BigInt(p.amount)
      const type = p.real_time ? 'RTC' : 'EFT'
      sum += amount
      fees += this.settings.fees[type]
      if (type === 'RTC') rtc += amount
      else eft += amount
      const first = seen.get(p.payment_id)
      if (first !== undefined) issues.push({ field: `payments[${i}].payment_id`,
        message: `repeats payments[${first}].payment_id: payment ids are unique in a batch` })
      else seen.set(p.payment_id, i)
      try {
        checkPaymentLimit(this.calendar, now, type, amount)
      } catch (error) {
        if (!(error instanceof LimitExceeded)) throw error
        overLimit.push({ field: `payments[${i}].amount`,
          message: (error.details[0] as FieldIssue).message })
      }
    })
    if (request.payment_count !== request.payments.length) {
      issues.push({ field: 'payment_count',
        message: `is ${request.payment_count} but payments lists ${request.payments.length}` })
    }
    if (BigInt(request.total_amount) !== sum) issues.push({ field: 'total_amount',
      message: `is ${request.total_amount} but the payments add up to ${sum}` })
    // Payments over their limit alone are limit_exceeded; with any other issue, all are listed
    // in one invalid_request (fix those first).
    if (issues.length > 0) throw Invalid.listing('invalid batch', [...issues, ...overLimit])
    if (overLimit.length > 0) throw LimitExceeded.listing('payments over their limit', overLimit)
    return { total: sum, fees, eft_total: eft, rtc_total: rtc }
  }

  /** The entity's oldest account, or the one the request names (it must be the entity's). */
  private async payingAccount(entityId: string, accountId: string | undefined): Promise<string> {
    const accounts = await this.directory.accountIdsOf(entityId)
    if (accountId === undefined) {
      const oldest = accounts[0]
      if (!oldest) throw Invalid.field('account_id', 'the entity has no account to pay from')
      return oldest
    }
    if (!accounts.includes(accountId)) throw new NotFound('account')
    return accountId
  }

  async verify(partnerId: string, entityId: string, request: { bulk_payment_id: string;
      otp: string }) {
    const outcome = await this.db.transaction().execute(async (trx) => {
      const batch = await batchForUpdate(trx, partnerId, request.bulk_payment_id)
      if (!batch || batch.entity_id !== entityId) throw new NotFound('bulk payment')
      const now = this.clock.now()
      // The entity's budget comes first: once it is spent, no verify of its batches gets further.
      await lockEntity(trx, entityId)
      const spent = await pinBudgetRefusal(trx, entityId, now, this.entityLimits)
      if (spent) throw spent
      const refusal = this.verifyRefusal(batch)
      if (refusal) throw refusal
      if (now.getTime() >= batch.otp_expires_at.getTime()) {
        await this.fail(trx, batch, 'otp_expired')
        return { error: otpExpired() }
      }
      if (!otpMatches(this.otpKey, batch.id, batch.otp_number, request.otp, batch.otp_hash)) {
        const attempts = batch.otp_attempts + 1
        await updateBatch(trx, batch.id, { otp_attempts: attempts })
        await recordWrongPin(trx, entityId, batch.id, now, this.entityLimits)
        const left = bulk_limits.otp_attempts_max - attempts
        if (left <= 0) await this.fail(trx, { ...batch, otp_attempts: attempts }, 'otp_locked')
        const message = left > 0 ? `wrong one-time PIN; ${left} attempt(s) left`
          : 'wrong one-time PIN; no attempts left: the batch has ended failed'
        return { error: new BankError('otp_invalid', message,
          [{ field: 'otp', message: 'is not the PIN sent for this batch', attempts_left: left }]) }
      }
      await this.fund(trx, batch, now)
      return { batch }
    })
    if ('error' in outcome) throw outcome.error
    // The batch's processing job has committed: start it now rather than at the next poll.
    this.jobs.kick()
    const items = await itemsOf(this.db, outcome.batch.id)
    return {
      bulk_payment_id: outcome.batch.bulk_payment_id,
      status: 'processing' as const,
      processed_count: 0,
      total_count: outcome.batch.payment_count,
      // As the batch was when verify committed: every payment processing, none paid yet.
      payments: items.map((item) => ({ payment_id: item.payment_id, status: 'processing' as const,
        tx_id: null })),
    }
  }

  /** Verify's refusals by state, in the order of docs/guides/bulk-payments.md. */
  private verifyRefusal(batch: BatchRow): BankError | undefined {
    if (batch.otp_attempts >= bulk_limits.otp_attempts_max) return lockedOut()
    if (batch.status === 'failed' && batch.failure_reason === 'otp_expired') return otpExpired()
    if (batch.status !== 'pending_otp') return batchState(
      `the batch is ${batch.status}; only a batch in pending_otp can be verified`)
    return undefined
  }

  /**
   * The right PIN in time: the batch is funded in one ledger transaction and goes to processing.
   */
  private async fund(trx: Kysely<Database>, batch: BatchRow, now: Date): Promise<void> {
    const items = await itemsOf(trx, batch.id)
    const plan = fundingPlanOf(batch, items)
    await this.ledger.write(trx, fundingCapture, plan)
    await setAllItems(trx, batch.id, 'processing')
    const verified: BatchRow = { ...batch, status: 'processing', verified_at: now }
    await updateBatch(trx, batch.id, { status: 'processing', verified_at: now })
    await this.jobs.enqueue(trx, { kind: bulk_process_job_kind, key: batch.id,
      payload: { batch_id: batch.id } })
    const view =
      batchView(verified, items.map((item) => ({ ...item, status: 'processing' as const })))
    await appendEvent(trx, { type: 'bulk_payment.verified', partner_id: batch.partner_id,
      resource_id: batch.id, data: view, occurred_at: now, endpoint_url: batch.callback_url })
  }

  /** Ends a pending batch failed (expiry, lock-out): hold released, event written. */
  private async fail(trx: Kysely<Database>, batch: BatchRow, reason: 'otp_expired' | 'otp_locked'
      | 'otp_not_sent'): Promise<void> {
    const release = { funding: fundingOf(batch), reason: `bulk payment failed: ${reason}` }
    await this.ledger.write(trx, fundingRelease, release)
    const now = this.clock.now()
    await updateBatch(trx, batch.id, { status: 'failed', failure_reason: reason,
      completed_at: now })
    const items = await itemsOf(trx, batch.id)
    const view = batchView({ ...batch, status: 'failed', completed_at: now }, items)
    await appendEvent(trx, { type: 'bulk_payment.failed', partner_id: batch.partner_id,
      resource_id: batch.id, data: { ...view, reason }, occurred_at: now,
      endpoint_url: batch.callback_url })
  }

  /** The expiry job: a batch still pending when its PIN expired ends failed. */
  async expire(batchId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const batch = await trx.selectFrom('bulk_payments').selectAll().where('id', '=', batchId)
        .forUpdate().executeTakeFirst()
      assert(batch, `OTP expiry job for missing batch ${batchId}`)
      if (batch.status !== 'pending_otp') return false
      // The job is due at expiry on the bank's clock; a run before it (a manual retry) waits.
      if (this.clock.now().getTime() < batch.otp_expires_at.getTime()) throw new Error(
        'the one-time PIN has not expired yet')
      await this.fail(trx, batch, 'otp_expired')
      return true
    })
  }

  /** Ends a pending batch without verify (a PIN that could not be sent). */
  private async endPending(batchId: string, reason: 'otp_not_sent'): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const batch = await trx.selectFrom('bulk_payments').selectAll().where('id', '=', batchId)
        .forUpdate().executeTakeFirst()
      if (batch?.status === 'pending_otp') await this.fail(trx, batch, reason)
    })
  }

  async status(partnerId: string, entityId: string, bulkPaymentId: string) {
    const batch = await batchOf(this.db, partnerId, bulkPaymentId)
    if (!batch || batch.entity_id !== entityId) throw new NotFound('bulk payment')
    return batchView(batch, await itemsOf(this.db, batch.id))
  }

  async cancel(partnerId: string, entityId: string, request: { bulk_payment_id: string;
      reason?: string | undefined }) {
    const outcome = await this.db.transaction().execute(async (trx) => {
      const batch = await batchForUpdate(trx, partnerId, request.bulk_payment_id)
      if (!batch || batch.entity_id !== entityId) throw new NotFound('bulk payment')
      if (batch.status !== 'pending_otp') {
        throw batchState(`the batch is ${batch.status}; only a batch ` +
          `waiting for its one-time PIN (pending_otp) can be cancelled`)
      }
      const now = this.clock.now()
      if (now.getTime() >= batch.otp_expires_at.getTime()) {
        // Its PIN expired before the expiry job ran: it ends failed, as the job would end it.
        await this.fail(trx, batch, 'otp_expired')
        return { error: batchState('the batch is failed (its one-time PIN ' +
          'expired); only a batch in pending_otp can be cancelled') }
      }
      const release = { funding: fundingOf(batch), reason: 'bulk payment cancelled' }
      await this.ledger.write(trx, fundingRelease, release)
      const reason = request.reason ?? null
      await updateBatch(trx, batch.id, { status: 'cancelled', cancelled_at: now,
        cancel_reason: reason })
      const view = batchView({ ...batch, status: 'cancelled' }, await itemsOf(trx, batch.id))
      await appendEvent(trx, {
        type: 'bulk_payment.cancelled', partner_id: partnerId, resource_id: batch.id,
        data: { ...view, cancelled_at: formatTimestamp(now), reason }, occurred_at: now,
          endpoint_url: batch.callback_url,
      })
      return { reply: { bulk_payment_id: batch.bulk_payment_id, status: 'cancelled' as const,
        cancelled_at: formatTimestamp(now), reason } }
    })
    if ('error' in outcome) throw outcome.error
    return outcome.reply
  }

  /** Sandbox only (docs/guides/sandbox.md): the batch's PIN, which production never keeps. */
  async sandboxOtp(request: { bulk_payment_id: string; partner_id?: string | undefined }) {
    if (!this.settings.sandbox) throw new Forbidden(
      'ops.sandbox subjects are refused outside sandbox mode')
    const batches = await batchesById(this.db, request.bulk_payment_id, request.partner_id)
    if (batches.length > 1) throw Invalid.field('partner_id',
      'two partners use this bulk_payment_id: name the partner')
    const batch = batches[0]
    if (!batch?.otp_sandbox) throw new NotFound('bulk payment')
    return { otp: batch.otp_sandbox, expires_at: formatTimestamp(batch.otp_expires_at) }
  }
}

/**
 * Initiate's hold: total plus fees on the partner's own account, with the Pending funding
 * row (holdFunding). An account that is not the partner's is not found, and a short one is
 * refused on the request's `total_amount`; then nothing is written. The kind is bulk/'s own,
 * not the ledger's, since its refusals are the bulk request's.
 */
const fundingHold: JournalKind<{ partner_id: string; plan: FundingPlan }, void> = {
  name: 'bulk.funding',
  accountsOf: ({ plan }) => [plan.account_id],
  record(journal, { partner_id, plan }) {
    const accountId = plan.account_id
    if (!journal.has(accountId) || journal.account(accountId).partner_id !== partner_id) {
      throw new NotFound('account')
    }
    const notActive = debitRefusal(journal, accountId)
    if (notActive) throw notActive
    if (!holdFunding(journal, plan)) {
      throw new InsufficientFunds('total_amount',
        'the available balance does not cover the total plus fees')
    }
  },
}

/** A batch's payments as stored: `pending` until verify, each with the fee of its type. */
function itemRows(batchId: string, payments: BulkInitiateRequest['payments'],
    fees: Record<PaymentType, bigint>) {
  return payments.map((p, position) => ({
    batch_id: batchId, position, payment_id: p.payment_id, amount: BigInt(p.amount),
    fee: fees[p.real_time ? 'RTC' : 'EFT'], real_time: p.real_time ?? false,
    ref: p.ref, own_ref: p.own_ref, account_number: p.account_number, branch_code: p.branch_code,
    name: p.name, notification_email: p.notification_email ?? null, status: 'pending' as const,
    tx_id: null, error_message: null, processed_at: null,
  }))
}

/**
 * A verify or cancel of a batch not in `pending_otp`: invalid_state, with the 400 the
 * interface gives it, on `bulk_payment_id`.
 */
function batchState(message: string): InvalidState {
  return InvalidState.field('bulk_payment_id', message, 400)
}


export function fundingOf(batch: BatchRow) {
  return { funding_tx_id: batch.funding_tx_id, account_id: batch.account_id,
    total: cents(batch.total_amount), fees: cents(batch.fee_total) }
}

function fundingPlanOf(batch: BatchRow, items: Array<{ amount: bigint | string;
    real_time: boolean }>): FundingPlan {
  let eft = 0n
  let rtc = 0n
  for (const item of items) {
    if (item.real_time) rtc += cents(item.amount)
    else eft += cents(item.amount)
  }
  assert(eft + rtc === cents(batch.total_amount),
    `batch ${batch.id}: payments add up to ${eft + rtc}, not its total`)
  return {
    ...fundingOf(batch),
    bulk_payment_id: batch.bulk_payment_id,
    description: batch.description,
    payment_count: batch.payment_count,
    added_by: batch.added_by,
    eft_total: eft,
    rtc_total: rtc,
  }
}
