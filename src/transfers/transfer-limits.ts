import { toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import { LimitExceeded } from '../errors.ts'

// Per-payment limits (docs/guides/payments.md): an EFT is at most R5,000,000; a
// payment that settles at once (RTC, and internal payments, which are instant too) is at
// most R5,000,000 on South African business days from 00:00 until 16:00 SAST and at most
// R250,000 at any other time.

export const limits = {
  eft_cents_max: 500_000_000n,
  rtc_cents_max: 500_000_000n,
  rtc_after_hours_cents_max: 25_000_000n,
  /** The higher instant limit holds on business days from 00:00 until this minute SAST. */
  rtc_high_limit_until_minute: 16 * 60,
}

// The job kinds' retries, leases and backoffs (transfer-service.ts's own transfer job keeps
// its inline for now: that file is being reworked).

/** The `payment_advice_job_kind` job kind (payment-advice.ts): its retries, lease and backoff. */
export const payment_advice_job_limits = {
  attempts_max: 12,
  lease_ms: 30_000,
  backoff_base_ms: 30_000,
  backoff_max_ms: 3_600_000,
}

/** The `clearing_job_kind` job kind (clearing-service.ts): its retries, lease and backoff. */
export const clearing_job_limits = {
  attempts_max: 10,
  lease_ms: 60_000,
  backoff_base_ms: 30_000,
  backoff_max_ms: 30 * 60_000,
}

/** The `transfer_key_expiry_job_kind` job kind (transfer-key-expiry.ts): retries, lease. */
export const transfer_key_expiry_job_limits = {
  attempts_max: 10,
  lease_ms: 60_000,
  backoff_base_ms: 60_000,
  backoff_max_ms: 3_600_000,
}

/** The `rtc_recovery_job_kind` job kind (clearing-service.ts): its retries, lease and backoff. */
export const rtc_recovery_job_limits = {
  attempts_max: 20,
  lease_ms: 60_000,
  backoff_base_ms: 10_000,
  backoff_max_ms: 10 * 60_000,
}

/** The recurring look for the clearing house's files (`rail.inbound`). */
export const rail_inbound_job_limits = {
  attempts_max: 20,
  lease_ms: 5 * 60_000,
  backoff_base_ms: 10_000,
  backoff_max_ms: 10 * 60_000,
  /** How often an instance looks into the inbound folder. */
  every_ms: 30_000,
}

export type PaymentType = 'EFT' | 'RTC' | 'INTERNAL'

const instantNames: Record<Exclude<PaymentType, 'EFT'>, string> =
  { RTC: 'an RTC', INTERNAL: 'an internal payment' }

/**
 * Refuses an amount above its payment type's limit at `now` (400 limit_exceeded on `amount`).
 */
export function checkPaymentLimit(calendar: SouthAfricanCalendar, now: Date,
    paymentType: PaymentType, amount: bigint): void {
  if (paymentType === 'EFT') {
    if (amount > limits.eft_cents_max) throw LimitExceeded.field('amount',
      `an EFT is at most ${limits.eft_cents_max} cents`)
    return
  }
  const sast = toSast(now)
  const highLimit = calendar.isBusinessDay(sast.date)
    && sast.minutes < limits.rtc_high_limit_until_minute
  const max = highLimit ? limits.rtc_cents_max : limits.rtc_after_hours_cents_max
  if (amount <= max) return
  const what = instantNames[paymentType]
  throw LimitExceeded.field(
    'amount',
    highLimit ? `${what} is at most ${max} cents`
      : `${what} outside business days 00:00-16:00 SAST is at most ${max} cents`,
  )
}
