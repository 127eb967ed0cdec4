import type { Kysely } from 'kysely'
import { toSast } from '../calendar/sa-calendar.ts'
import { formatRand as formatAnyRand } from '../contract/format.ts'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import { transactionOf } from '../ledger/ledger-store.ts'
import type { Notifier } from '../notify/notifier.ts'
import { advisedPayments, insertPaymentAdvices, markPaymentAdviceSent, paymentAdviceOf, type PaymentAdviceRow } from './payment-advice-store.ts'
import { payment_advice_job_limits } from './transfer-limits.ts'

// Payment advices (docs/guides/payments.md: `notification_email`, `notification_name`): a
// payment that names an e-mail address tells its recipient, once it is Successful, that
// the money was paid. Durable and once:
//  1. the reserve step records the advice in the same database transaction as the
//     payment's rows (a payment refused for funds records none);
//  2. the transaction that makes the payment Successful (an RTC's settle batch, the
//     clearing run that settles an EFT, an internal payment at once) enqueues one
//     `payment_advice.send` job keyed by the payment's tx_id, so it is enqueued once
//     however often that step is replayed; a Failed or Invalid payment enqueues nothing;
//  3. the job sends through the notifier under the key `payment_advice:<tx_id>` (a send
//     repeated after a crash is a no-op) and then marks the advice sent.

export const payment_advice_job_kind = 'payment_advice.send'

/** Who paid, as the advice names them: the paying account's entity. */
export interface PayerDirectory {
  payerName(partnerId: string, accountId: string): Promise<string>
}

export class PaymentAdvices {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly notifier: Notifier,
    private readonly payers: PayerDirectory,
  ) {
    jobs.register({
      kind: payment_advice_job_kind,
      ...payment_advice_job_limits,
      run: (job) => this.send(String(job.payload.tx_id)),
    })
  }

  /** Records advices with their payments, in the reserve step's transaction. */
  record(trx: Kysely<Database>, advices: PaymentAdviceRow[]): Promise<void> {
    return insertPaymentAdvices(trx, advices)
  }

  /** In the transaction that made these payments Successful: one send job per advice. */
  async paid(trx: Kysely<Database>, txIds: readonly string[]): Promise<void> {
    for (const txId of await advisedPayments(trx, txIds)) {
      await this.jobs.enqueue(trx, { kind: payment_advice_job_kind, key: txId,
        payload: { tx_id: txId } })
    }
  }

  /** The job: sends the advice unless it was sent, then marks it sent. */
  async send(txId: string): Promise<{ sent: boolean }> {
    const advice = await paymentAdviceOf(this.db, txId)
    assert(advice, `payment advice job for ${txId} has no advice row`)
    if (advice.sent_at) return { sent: false }
    const payment = await transactionOf(this.db, advice.partner_id, txId)
    assert(payment, `payment advice for ${txId} has no payment`)
    assert(payment.status === 'Successful' || payment.status === 'Reversed',
      `payment ${txId} was advised while ${payment.status}`)
    const payer = await this.payers.payerName(advice.partner_id, payment.account_id)
    const message = adviceMessage({
      recipientName: advice.name,
      payerName: payer,
      amount: BigInt(payment.amount),
      ref: payment.ref,
      paymentType: payment.tx_payment_type,
      paidAt: payment.status_at ?? payment.created_at,
      txId,
    })
    await this.notifier.send({ key: `payment_advice:${txId}`, to: advice.email, ...message })
    await markPaymentAdviceSent(this.db, txId, this.clock.now())
    return { sent: true }
  }
}

const payment_type_names: Record<string, string> = {
  EFT: 'EFT',
  RTC: 'real-time clearing (RTC)',
  INTERNAL: 'transfer between accounts of this bank',
}

/** Name lengths in the subject line, so that it stays short whatever the entity is called. */
const subject_name_length_max = 80

/** The advice's subject and text: amount in rand, reference, payer, date (SAST). */
export function adviceMessage(advice: {
  recipientName: string
  payerName: string
  amount: bigint
  ref: string
  paymentType: string
  paidAt: Date
  txId: string
}): { subject: string; text: string } {
  const amount = formatRand(advice.amount)
  const payer = advice.payerName.length > subject_name_length_max
    ? `${advice.payerName.slice(0, subject_name_length_max - 1)}…` : advice.payerName
  const when = toSast(advice.paidAt)
  const hours = String(Math.floor(when.minutes / 60)).padStart(2, '0')
  const time = `${hours}:${String(when.minutes % 60).padStart(2, '0')}`
  const lines = [
    advice.recipientName ? `Dear ${advice.recipientName},` : 'Hello,',
    '',
    `${advice.payerName} has paid you ${amount}.`,
    '',
    `Amount:      ${amount}`,
    `Reference:   ${advice.ref}`,
    `Paid by:     ${advice.payerName}`,
    `Date:        ${when.date} ${time} SAST`,
    `Method:      ${payment_type_names[advice.paymentType] ?? advice.paymentType}`,
    `Payment id:  ${advice.txId}`,
    '',
    'This advice was sent at the payer\'s request. The time the money shows in your account ' +
    'depends on your bank.',
  ]
  return { subject: `Payment advice: ${amount} from ${payer}`, text: lines.join('\n') }
}

/** An advised amount as rand for people: `R1,234.56` (contract/format.ts). */
export function formatRand(cents: bigint): string {
  assert(cents >= 0n, 'an advised amount is never negative')
  return formatAnyRand(cents)
}
