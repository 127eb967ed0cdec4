import { formatTimestamp } from '../contract/format.ts'
import { cents } from '../ledger/cents.ts'
import type { BatchStatusView, PaymentStatusItem } from './bulk-contract.ts'
import type { BatchRow, ItemRow } from './bulk-store.ts'

// A batch and its payments as the status operation answers them; events carry the same.

export function paymentView(item: ItemRow): PaymentStatusItem {
  return {
    payment_id: item.payment_id,
    status: item.status,
    tx_id: item.tx_id,
    amount: cents(item.amount).toString(),
    recipient_name: item.name,
    error_message: item.error_message,
    processed_at: item.processed_at ? formatTimestamp(item.processed_at) : null,
  }
}

export function batchView(batch: BatchRow, items: ItemRow[]): BatchStatusView {
  let successfulAmount = 0n
  let failedAmount = 0n
  let successfulCount = 0
  let failedCount = 0
  for (const item of items) {
    if (item.status === 'success') {
      successfulAmount += cents(item.amount)
      successfulCount++
    } else if (item.status === 'failed') {
      failedAmount += cents(item.amount)
      failedCount++
    }
  }
  return {
    bulk_payment_id: batch.bulk_payment_id,
    status: batch.status,
    created_at: formatTimestamp(batch.created_at),
    completed_at: batch.completed_at ? formatTimestamp(batch.completed_at) : null,
    total_amount: cents(batch.total_amount).toString(),
    successful_amount: successfulAmount.toString(),
    failed_amount: failedAmount.toString(),
    payment_count: batch.payment_count,
    successful_count: successfulCount,
    failed_count: failedCount,
    payments: items.map(paymentView),
  }
}
