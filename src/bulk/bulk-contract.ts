import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { branchCode, email, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { centsAmount } from '../transfers/transfer-contract.ts'

// Bulk payments (docs/guides/bulk-payments.md): a
// batch of up to 1000 EFT and RTC payments out of one of an entity's accounts, held at
// once, confirmed with a one-time PIN sent to the entity's e-mail, then funded in one
// ledger transaction and paid out payment by payment.

export const bulk_limits = {
  payments_max: 1000,
  /** A batch of 1000 payments is far larger than any other request. */
  request_bytes_max: 786_432,
  bulk_payment_id_length_max: 64,
  payment_id_length_max: 64,
  description_length_max: 140,
  callback_url_length_max: 2000,
  reason_length_max: 200,
  otp_ttl_ms: 5 * 60_000,
  otp_attempts_max: 3,
  /**
   * Wrong PINs an entity may give, across its batches, in any rolling window of wrong_pin_window_ms
   * (docs/guides/bulk-payments.md).
   */
  wrong_pins_per_entity_max: 10,
  wrong_pin_window_ms: 60 * 60_000,
  /** Batches of one entity waiting for their PIN at once (docs/guides/bulk-payments.md). */
  pending_batches_per_entity_max: 20,
} as const

export const batchStatuses = ['pending_otp', 'processing', 'completed', 'failed',
  'cancelled'] as const
export const paymentStatuses = ['pending', 'processing', 'success', 'failed'] as const

/** A partner's batch id: client supplied, printable, unique per partner for ever. */
const bulkPaymentId = () =>
  z
    .string({ error: 'must be a string' })
    .regex(/^[A-Za-z0-9._:-]+$/, { error: 'must be letters, digits, ".", "_", ":" or "-"' })
    .min(1, { error: 'must not be empty' })
    .max(bulk_limits.bulk_payment_id_length_max,
      { error: `must be at most ${bulk_limits.bulk_payment_id_length_max} characters` })

const callbackUrl = () =>
  z
    .string({ error: 'must be a string' })
    .max(bulk_limits.callback_url_length_max,
      { error: `must be at most ${bulk_limits.callback_url_length_max} characters` })
    .pipe(z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }))

export const bulkPaymentItem = z.strictObject({
  payment_id: text(1, bulk_limits.payment_id_length_max),
  amount: centsAmount().min(100, { error: 'must be at least 100 cents' }),
  ref: text(2, 25),
  /** true pays and clears at once (RTC); false or absent waits for the EFT clearing cycle. */
  real_time: z.boolean({ error: 'must be true or false' }).optional(),
  own_ref: text(2, 50),
  account_number: z.string({ error: 'must be a string' }).regex(/^\d{6,16}$/, { error: 'must be 6 to 16 digits' }),
  branch_code: branchCode(),
  name: text(1, 100),
  notification_email: email().optional(),
})
export type BulkPaymentItem = z.output<typeof bulkPaymentItem>

/**
 * The subject names the entity; our SDK reads it from the request's `entity_id`, so a
 * request may repeat it (it must then be the subject's).
 */
const subjectEntity = { entity_id: uuid().optional() }

export const bulkInitiateRequest = z.strictObject({
  ...subjectEntity,
  bulk_payment_id: bulkPaymentId(),
  total_amount: centsAmount().min(100, { error: 'must be at least 100 cents' }),
  payment_count: z
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(bulk_limits.payments_max,
      { error: `a batch has at most ${bulk_limits.payments_max} payments` }),
  description: text(1, bulk_limits.description_length_max),
  payments: z
    .array(bulkPaymentItem, { error: 'must be a list of payments' })
    .min(1, { error: 'must list at least one payment' })
    .max(bulk_limits.payments_max,
      { error: `a batch has at most ${bulk_limits.payments_max} payments` }),
  callback_url: callbackUrl().optional(),
  /** The paying account: one of the entity's accounts; its oldest when absent. */
  account_id: uuid().optional(),
})
export type BulkInitiateRequest = z.output<typeof bulkInitiateRequest>

const batchRef = z.strictObject({ ...subjectEntity, bulk_payment_id: bulkPaymentId() })

export const paymentStatusItem = z.object({
  payment_id: z.string(),
  status: z.enum(paymentStatuses),
  tx_id: z.string().nullable(),
  amount: centsString,
  recipient_name: z.string(),
  error_message: z.string().nullable(),
  processed_at: timestamp.nullable(),
})
export type PaymentStatusItem = z.output<typeof paymentStatusItem>

export const batchStatusView = z.object({
  bulk_payment_id: z.string(),
  status: z.enum(batchStatuses),
  created_at: timestamp,
  completed_at: timestamp.nullable(),
  total_amount: centsString,
  successful_amount: centsString,
  failed_amount: centsString,
  payment_count: z.number(),
  successful_count: z.number(),
  failed_count: z.number(),
  payments: z.array(paymentStatusItem),
})
export type BatchStatusView = z.output<typeof batchStatusView>

export const bulkOperations = {
  initiate: operation({
    name: 'bulk_payment_initiate',
    sdk: 'bulkPayments.initiate',
    subject: 'svc.account.<entity_id>.bulk_payment.initiate',
    permission: 'payments',
    summary:
      "Create a batch of up to 1000 EFT/RTC payments out of the entity's oldest account (or " +
      "account_id): total plus fees " +
      'is held at once and a one-time PIN goes to the entity\'s e-mail; the batch waits in ' +
      'pending_otp for verify.',
    request: bulkInitiateRequest,
    response: z.object({
      bulk_payment_id: z.string(),
      status: z.literal('pending_otp'),
      otp_reference: z.string(),
      expires_at: timestamp,
      total_amount: centsString,
      payment_count: z.number(),
    }),
    requestBytesMax: bulk_limits.request_bytes_max,
  }),
  verify: operation({
    name: 'bulk_payment_verify',
    sdk: 'bulkPayments.verify',
    subject: 'svc.account.<entity_id>.bulk_payment.verify',
    permission: 'payments',
    summary:
      'Confirm a batch with its one-time PIN: the batch is funded in one ledger transaction and ' +
      'its payments go out asynchronously (RTC at once, EFT at the next clearing cycle). ' +
      `${bulk_limits.otp_attempts_max} wrong PINs or ${bulk_limits.otp_ttl_ms / 60_000} minutes ` +
      `end the batch failed.`,
    request: batchRef.extend({ otp: z.string({ error: 'must be a string' }).regex(/^\d{6}$/, { error: 'must be 6 digits' }) }),
    response: z.object({
      bulk_payment_id: z.string(),
      status: z.literal('processing'),
      processed_count: z.number(),
      total_count: z.number(),
      payments: z.array(z.object({ payment_id: z.string(), status: z.enum(paymentStatuses),
        tx_id: z.string().nullable() })),
    }),
  }),
  status: operation({
    name: 'bulk_payment_status',
    sdk: 'bulkPayments.status',
    subject: 'svc.account.<entity_id>.bulk_payment.status',
    permission: 'read',
    summary: "A batch's state, its counts and amounts so far, and every payment's state.",
    request: batchRef,
    response: batchStatusView,
  }),
  cancel: operation({
    name: 'bulk_payment_cancel',
    sdk: 'bulkPayments.cancel',
    subject: 'svc.account.<entity_id>.bulk_payment.cancel',
    permission: 'payments',
    summary: 'Cancel a batch still waiting for its one-time PIN; its hold is released. Any other state is a 400.',
    request: batchRef.extend({ reason: text(1, bulk_limits.reason_length_max).optional() }),
    response: z.object({
      bulk_payment_id: z.string(),
      status: z.literal('cancelled'),
      cancelled_at: timestamp,
      reason: z.string().nullable(),
    }),
  }),
  sandboxOtp: operation({
    name: 'ops_sandbox_otp',
    sdk: 'sandbox.otp',
    subject: 'ops.sandbox.otp',
    permission: 'operator',
    summary: "Sandbox only: a batch's current one-time PIN and its expiry (partner_id when two partners use the id).",
    request: z.strictObject({ bulk_payment_id: bulkPaymentId(), partner_id: uuid().optional() }),
    response: z.object({ otp: z.string(), expires_at: timestamp }),
    cli: { positionals: ['bulk_payment_id'] },
  }),
}
