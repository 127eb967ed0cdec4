import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { branchCode, email, pageLimit, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { centsAmount } from '../transfers/transfer-contract.ts'

// Debit orders and their mandates (docs/guides/debit-orders.md). A partner registers a debtor's
// mandate for one of its entities; the debtor's bank authenticates it; orders collect from the
// debtor's account under an active mandate into the entity's oldest account, once or on a schedule.

export const debit_limits = {
  reference_length_max: 20,
  metadata_bytes_max: 1024,
  tracking_days_max: 30,
  tracking_days_default: 10,
  client_tx_id_length_max: 64,
  mandate_reference_length_max: 35,
  account_holder_name_length_max: 100,
  reason_length_max: 200,
  /** clientTxId duplicates are refused for this long after first use (interface: 30 days). */
  client_tx_id_window_ms: 30 * 86_400_000,
  /** A first collection date may be at most this many days ahead. */
  collection_days_ahead_max: 366,
  /** A recurring order's end date may be at most this many years after its first collection. */
  end_date_years_max: 30,
  list_limit_default: 100,
  list_limit_max: 1000,
  list_offset_max: 10_000_000,
  /** The smallest collection, as the smallest payment (transfers, bulk). */
  amount_min: 100,
} as const

export const debitOrderStatuses = ['scheduled', 'processing', 'successful', 'failed', 'disputed',
  'cancelled'] as const
export const mandateStatuses = ['pending_authentication', 'active', 'rejected',
  'cancelled'] as const
export const debitFrequencies = ['once_off', 'weekly', 'monthly', 'annually'] as const
export const debitAccountTypes = ['cheque', 'savings'] as const

/** A calendar date `YYYY-MM-DD` that exists (no 2026-02-30). */
export const calendarDate = () =>
  z
    .string({ error: 'must be a string' })
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date like 2026-12-01 (YYYY-MM-DD)' })
    .refine((value) => {
      const at = new Date(`${value}T00:00:00Z`)
      return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === value
        && Number(value.slice(0, 4)) >= 2000
    }, { error: 'must be a real calendar date (YYYY-MM-DD, year 2000 or later)' })

/** A client-supplied id: printable, no spaces, as bulk payment ids. */
const clientId = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .regex(/^[A-Za-z0-9._:\/-]+$/, { error: 'must be letters, digits, ".", "_", ":", "/" or "-"' })

const accountNumber = () => z.string({ error: 'must be a string' }).regex(/^\d{6,16}$/, { error: 'must be 6 to 16 digits' })
const debitAmount = () => centsAmount().min(debit_limits.amount_min,
  { error: `must be at least ${debit_limits.amount_min} cents` })

/** At most 1 KB as the JSON the bank stores (UTF-8 bytes of its serialised form). */
const metadata = () =>
  z
    .record(z.string(), z.unknown(), { error: 'must be an object' })
    .refine((value) => jsonBytesWithin(value, debit_limits.metadata_bytes_max), {
      error: `must be at most ${debit_limits.metadata_bytes_max} bytes as JSON`,
    })

/**
 * Whether a value's JSON is at most `max` bytes. A value too deep to serialise (the schema
 * may meet one before the transport's depth rule, e.g. in the SDK) is certainly too large.
 */
function jsonBytesWithin(value: unknown, max: number): boolean {
  try {
    return Buffer.byteLength(JSON.stringify(value), 'utf8') <= max
  } catch {
    return false
  }
}

/**
 * The subject names the entity; our SDK reads it from the request's `entity_id`, so a
 * request may repeat it (it must then be the subject's).
 */
const subjectEntity = { entity_id: uuid().optional() }

const debtorAccount = {
  account_holder_name: text(1, debit_limits.account_holder_name_length_max),
  account_number: accountNumber(),
  account_type: z.enum(debitAccountTypes, { error: 'must be cheque or savings' }),
  branch_code: branchCode(),
}

export const mandateCreateRequest = z.strictObject({
  ...subjectEntity,
  mandate_reference: clientId(debit_limits.mandate_reference_length_max),
  ...debtorAccount,
  max_amount: debitAmount(),
  frequency: z.enum(debitFrequencies, { error: 'must be once_off, weekly, monthly or annually' }),
  first_collection_date: calendarDate().optional(),
  debtor_email: email().optional(),
})
export type MandateCreateRequest = z.output<typeof mandateCreateRequest>

const mandateRef = z.strictObject(
  { ...subjectEntity, mandate_reference: clientId(debit_limits.mandate_reference_length_max) })

export const mandateView = z.object({
  mandate_reference: z.string(),
  status: z.enum(mandateStatuses),
  account_holder_name: z.string(),
  account_number: z.string(),
  account_type: z.enum(debitAccountTypes),
  branch_code: z.string(),
  max_amount: centsString,
  frequency: z.enum(debitFrequencies),
  first_collection_date: z.string().nullable(),
  debtor_email: z.string().nullable(),
  created_at: timestamp,
  authenticated_at: timestamp.nullable(),
  rejection_reason: z.string().nullable(),
  cancelled_at: timestamp.nullable(),
})
export type MandateView = z.output<typeof mandateView>

const listPaging = {
  limit: pageLimit(debit_limits.list_limit_max).optional(),
  offset: z
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must not be negative' })
    .max(debit_limits.list_offset_max, { error: `must be at most ${debit_limits.list_offset_max}` })
    .optional(),
}

export const debitCreateRequest = z.strictObject({
  ...subjectEntity,
  clientTxId: clientId(debit_limits.client_tx_id_length_max),
  mandate_reference: clientId(debit_limits.mandate_reference_length_max),
  amount: debitAmount(),
  collection_date: calendarDate(),
  ...debtorAccount,
  reference: text(1, debit_limits.reference_length_max),
  frequency: z.enum(debitFrequencies, { error: 'must be once_off, weekly, monthly or annually' }),
  end_date: calendarDate().optional(),
  tracking_days: z
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must not be negative' })
    .max(debit_limits.tracking_days_max,
      { error: `must be at most ${debit_limits.tracking_days_max}` })
    .optional(),
  notification_email: email().optional(),
  metadata: metadata().optional(),
})
export type DebitCreateRequest = z.output<typeof debitCreateRequest>

const debitOrderRef = z.strictObject({ ...subjectEntity, debit_order_id: uuid() })

export const statusHistoryEntry = z.object({
  status: z.enum(debitOrderStatuses),
  timestamp,
  description: z.string(),
  bank_reference: z.string().optional(),
})

export const debitStatusView = z.object({
  debit_order_id: z.string(),
  status: z.enum(debitOrderStatuses),
  status_history: z.array(statusHistoryEntry),
  amount: z.number(),
  collection_date: z.string(),
  processed_date: timestamp.nullable(),
  bank_charges: centsString,
  net_amount: centsString,
})
export type DebitStatusView = z.output<typeof debitStatusView>

export const debitListItem = z.object({
  debit_order_id: z.string(),
  clientTxId: z.string(),
  mandate_reference: z.string(),
  amount: z.number(),
  status: z.enum(debitOrderStatuses),
  collection_date: z.string(),
  processed_date: timestamp.nullable(),
  reference: z.string(),
  account_holder_name: z.string(),
  frequency: z.enum(debitFrequencies),
  next_collection_date: z.string().nullable(),
  created_at: timestamp,
})
export type DebitListItem = z.output<typeof debitListItem>

export const debitOperations = {
  mandateCreate: operation({
    name: 'debit_mandate_create',
    sdk: 'mandates.create',
    subject: 'svc.debit.<entity_id>.mandate.create',
    permission: 'payments',
    summary:
      "Register a debtor's mandate (DebiCheck-style) for the entity: it starts " +
      "pending_authentication and becomes active or rejected when the debtor's bank has answered " +
      "(mandate.active / mandate.rejected events). " +
      'mandate_reference is unique per entity (409).',
    request: mandateCreateRequest,
    response: mandateView,
  }),
  mandateGet: operation({
    name: 'debit_mandate_get',
    sdk: 'mandates.get',
    subject: 'svc.debit.<entity_id>.mandate.get',
    permission: 'read',
    summary: "One of the entity's mandates by its reference.",
    request: mandateRef,
    response: mandateView,
  }),
  mandateList: operation({
    name: 'debit_mandate_list',
    sdk: 'mandates.list',
    subject: 'svc.debit.<entity_id>.mandate.list',
    permission: 'read',
    summary: "The entity's mandates, newest first, optionally of one status; limit (default 100, max 1000), offset and total.",
    request: z.strictObject({ ...subjectEntity, status: z.enum(mandateStatuses,
      { error: `must be one of ${mandateStatuses.join(', ')}` }).optional(), ...listPaging }),
    response: z.object({ mandates: z.array(mandateView), total: z.number(), limit: z.number(),
      offset: z.number() }),
  }),
  mandateCancel: operation({
    name: 'debit_mandate_cancel',
    sdk: 'mandates.cancel',
    subject: 'svc.debit.<entity_id>.mandate.cancel',
    permission: 'payments',
    summary:
      'Cancel a mandate that is pending_authentication or active: it becomes cancelled and every ' +
      'scheduled debit order on it is cancelled too (debit_order.cancelled events). A rejected ' +
      'or cancelled mandate is a 400.',
    request: mandateRef.extend({ reason: text(1, debit_limits.reason_length_max).optional() }),
    response: mandateView,
  }),
  create: operation({
    name: 'debit_create',
    sdk: 'debitOrders.create',
    subject: 'svc.debit.<entity_id>.create',
    permission: 'payments',
    summary:
      "Schedule a once-off or recurring collection from a debtor's account under an active " +
      "mandate, into the entity's " +
      'oldest account. collection_date at least 2 South African business days ahead (a ' +
      'non-business day moves to the next business day); end_date for recurring orders; ' +
      'clientTxId unique for 30 days (409).',
    request: debitCreateRequest,
    response: z.object({
      debit_order_id: z.string(),
      status: z.literal('scheduled'),
      collection_date: z.string(),
      amount: centsString,
      reference: z.string(),
    }),
  }),
  list: operation({
    name: 'debit_list',
    sdk: 'debitOrders.list',
    subject: 'svc.debit.<entity_id>.list',
    permission: 'read',
    summary:
      "The entity's debit orders, newest first: optional status, from_date and to_date " +
      "(collection date, inclusive), " +
      'limit (default 100, max 1000) and offset; total counts every match.',
    request: z.strictObject({
      ...subjectEntity,
      status: z.enum(debitOrderStatuses,
        { error: `must be one of ${debitOrderStatuses.join(', ')}` }).optional(),
      from_date: calendarDate().optional(),
      to_date: calendarDate().optional(),
      ...listPaging,
    }),
    response: z.object({ debit_orders: z.array(debitListItem), total: z.number(), limit: z.number(),
      offset: z.number() }),
  }),
  cancel: operation({
    name: 'debit_cancel',
    sdk: 'debitOrders.cancel',
    subject: 'svc.debit.<entity_id>.cancel',
    permission: 'payments',
    summary:
      'Cancel a scheduled debit order, no later than 24 hours before 00:00 SAST of its next ' +
      'collection date; otherwise 400.',
    request: debitOrderRef.extend({ reason: text(1, debit_limits.reason_length_max).optional() }),
    response: z.object({ debit_order_id: z.string(), status: z.literal('cancelled'),
      cancelled_at: timestamp }),
  }),
  status: operation({
    name: 'debit_status',
    sdk: 'debitOrders.status',
    subject: 'svc.debit.<entity_id>.status',
    permission: 'read',
    summary: "A debit order's state, its status history (every collection), and its last collection's charges and net amount.",
    request: debitOrderRef,
    response: debitStatusView,
  }),
  operatorList: operation({
    name: 'ops_debit_list',
    sdk: 'debit.list',
    subject: 'ops.debit.list',
    permission: 'operator',
    summary:
      "A partner's debit orders (all its entities, or one), newest first, optionally of one " +
      "status; limit (default 100, " +
      'max 1000), offset and total.',
    request: z.strictObject({
      partner_id: uuid(),
      entity_id: uuid().optional(),
      status: z.enum(debitOrderStatuses,
        { error: `must be one of ${debitOrderStatuses.join(', ')}` }).optional(),
      ...listPaging,
    }),
    response: z.object({
      debit_orders: z.array(debitListItem.extend({ entity_id: z.string() })),
      total: z.number(),
      limit: z.number(),
      offset: z.number(),
    }),
  }),
}
