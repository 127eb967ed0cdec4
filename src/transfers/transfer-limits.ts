import { toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import { Invalid } from '../errors.ts'

// Per-payment limits (RULINGS, Accounts and the ledger): an EFT is at most R5,000,000; a
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

export type PaymentType = 'EFT' | 'RTC' | 'INTERNAL'

const instantNames: Record<Exclude<PaymentType, 'EFT'>, string> = { RTC: 'an RTC', INTERNAL: 'an internal payment' }

/** Refuses an amount above its payment type's limit at `now` (400 on `amount`). */
export function checkPaymentLimit(calendar: SouthAfricanCalendar, now: Date, paymentType: PaymentType, amount: bigint): void {
  if (paymentType === 'EFT') {
    if (amount > limits.eft_cents_max) throw Invalid.field('amount', `an EFT is at most ${limits.eft_cents_max} cents`)
    return
  }
  const sast = toSast(now)
  const highLimit = calendar.isBusinessDay(sast.date) && sast.minutes < limits.rtc_high_limit_until_minute
  const max = highLimit ? limits.rtc_cents_max : limits.rtc_after_hours_cents_max
  if (amount <= max) return
  const what = instantNames[paymentType]
  throw Invalid.field(
    'amount',
    highLimit ? `${what} is at most ${max} cents` : `${what} outside business days 00:00-16:00 SAST is at most ${max} cents`,
  )
}
