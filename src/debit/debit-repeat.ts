import { Duplicate, IdempotencyKeyReused, type BankError, type FieldIssue } from '../errors.ts'
import { debit_limits, type DebitCreateRequest } from './debit-contract.ts'
import type { OrderRow } from './debit-store.ts'

// A debit order's clientTxId used again within 30 days: a retry of the same order is a
// `duplicate` naming the original `debit_order_id`; another order under the same key is
// `idempotency_key_reused`, naming each field that differs from the stored order. Both are
// 409, and neither changes anything.

/** The answer to a repeat of a live clientTxId, compared with its order (when readable). */
export function repeatOfOrder(request: DebitCreateRequest, entityId: string, originalId: string,
    original: OrderRow | undefined): BankError {
  const differing = original ? orderDifferences(request, entityId, original) : []
  if (differing.length === 0) {
    return new Duplicate('duplicate transaction: this clientTxId was used within the last ' +
      '30 days', { field: 'clientTxId', message: 'already used', debit_order_id: originalId })
  }
  return new IdempotencyKeyReused('clientTxId',
    differing.map((d) => ({ ...d, debit_order_id: originalId })))
}

function orderDifferences(request: DebitCreateRequest, entityId: string,
    order: OrderRow): FieldIssue[] {
  const issues: FieldIssue[] = []
  const compare = (field: string, now: unknown, was: unknown) => {
    if (now !== was) issues.push({ field,
      message: `differs from the original order's: ${JSON.stringify(was)}` })
  }
  compare('entity_id', entityId, order.entity_id)
  compare('mandate_reference', request.mandate_reference, order.mandate_reference)
  compare('amount', String(request.amount), String(order.amount))
  compare('collection_date', request.collection_date, order.requested_collection_date)
  compare('account_holder_name', request.account_holder_name, order.account_holder_name)
  compare('account_number', request.account_number, order.account_number)
  compare('account_type', request.account_type, order.account_type)
  compare('branch_code', request.branch_code, order.branch_code)
  compare('reference', request.reference, order.reference)
  compare('frequency', request.frequency, order.frequency)
  compare('end_date', request.end_date ?? null, order.end_date)
  compare('tracking_days', request.tracking_days ?? debit_limits.tracking_days_default,
    order.tracking_days)
  compare('notification_email', request.notification_email ?? null, order.notification_email)
  compare('metadata', canonical(request.metadata ?? null), canonical(order.metadata))
  return issues
}

/** A metadata object as text with its keys in order (jsonb does not keep theirs). */
function canonical(value: Record<string, unknown> | string | null): string | null {
  if (value === null) return null
  const object = typeof value === 'string' ? JSON.parse(value) as Record<string, unknown> : value
  return JSON.stringify(Object.keys(object).sort().map((key) => [key, object[key]]))
}
