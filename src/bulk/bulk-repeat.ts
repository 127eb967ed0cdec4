import { Duplicate, IdempotencyKeyReused, invalid_details_max, type BankError, type FieldIssue } from '../errors.ts'
import type { BulkInitiateRequest } from './bulk-contract.ts'
import type { BatchRow, ItemRow } from './bulk-store.ts'

// A second initiate with a `bulk_payment_id` the partner has used (unique per partner for
// ever): a retry of the same batch is a `duplicate`; another batch under the same id is
// `idempotency_key_reused`, naming each field that differs from the stored batch
// (docs/guides/bulk-payments.md). Both are 409, and neither changes anything.

/** What a repeat of `bulk_payment_id` is answered with, compared with the stored batch. */
export function repeatOf(request: BulkInitiateRequest, repeat: { entityId: string;
    accountId: string }, batch: BatchRow, items: ItemRow[]): BankError {
  const differing = batchDifferences(request, repeat, batch, items)
  const id = request.bulk_payment_id
  if (differing.length === 0) {
    return new Duplicate('duplicate bulk_payment_id: this batch was initiated before',
      { field: 'bulk_payment_id', message: 'already used', bulk_payment_id: id })
  }
  return new IdempotencyKeyReused('bulk_payment_id', differing.slice(0, invalid_details_max)
    .map((d) => ({ ...d, bulk_payment_id: id })))
}

/** A repeat whose stored batch could not be read (it raced with this one): a plain duplicate. */
export function duplicateOf(bulkPaymentId: string): BankError {
  return new Duplicate('duplicate bulk_payment_id: this partner has used it before',
    { field: 'bulk_payment_id', message: 'already used', bulk_payment_id: bulkPaymentId })
}

function batchDifferences(request: BulkInitiateRequest, repeat: { entityId: string;
    accountId: string }, batch: BatchRow, items: ItemRow[]): FieldIssue[] {
  const issues: FieldIssue[] = []
  const compare = (field: string, now: unknown, was: unknown) => {
    if (now !== was) issues.push({ field,
      message: `differs from the original batch's: ${JSON.stringify(was)}` })
  }
  compare('entity_id', repeat.entityId, batch.entity_id)
  compare('account_id', repeat.accountId, batch.account_id)
  compare('description', request.description, batch.description)
  compare('callback_url', request.callback_url ?? null, batch.callback_url)
  compare('total_amount', String(request.total_amount), String(batch.total_amount))
  compare('payment_count', request.payment_count, batch.payment_count)
  request.payments.forEach((p, i) => {
    const item = items[i]
    if (!item) return
    compare(`payments[${i}].payment_id`, p.payment_id, item.payment_id)
    compare(`payments[${i}].amount`, String(p.amount), String(item.amount))
    compare(`payments[${i}].real_time`, p.real_time ?? false, item.real_time)
    compare(`payments[${i}].ref`, p.ref, item.ref)
    compare(`payments[${i}].own_ref`, p.own_ref, item.own_ref)
    compare(`payments[${i}].account_number`, p.account_number, item.account_number)
    compare(`payments[${i}].branch_code`, p.branch_code, item.branch_code)
    compare(`payments[${i}].name`, p.name, item.name)
    compare(`payments[${i}].notification_email`, p.notification_email ?? null,
      item.notification_email)
  })
  const count = request.payments.length
  if (count !== items.length) compare('payments', `${count} payments`, `${items.length} payments`)
  return issues
}
