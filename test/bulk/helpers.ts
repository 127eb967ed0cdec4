import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { BankClient } from '../../src/client/index.ts'
import type { TestBank, TestPartner } from '../support/harness.ts'

// What the bulk payment tests share: request bodies and a way to read the one-time PIN
// the way the entity's user would, from the message the notifier sent.

export type InitiateBody = Parameters<BankClient['bulkPayments']['initiate']>[0]

/** A payment of a batch to an ordinary recipient; tests override what they are about. */
export function payment(n: number, overrides: Record<string, unknown> = {}) {
  return {
    payment_id: `p-${n}`,
    amount: 10_000,
    ref: `Salary ${n}`,
    own_ref: `Payroll run ${n}`,
    account_number: '62000000001',
    branch_code: '250655',
    name: `Employee ${n}`,
    ...overrides,
  }
}

/** A valid batch of `payments`, its count and total filled in. */
export function batchBody(entityId: string, payments: Array<Record<string, unknown>>,
    overrides: Record<string, unknown> = {}): InitiateBody {
  const total = payments.reduce((sum, p) => sum + (p.amount as number), 0)
  return {
    entity_id: entityId,
    bulk_payment_id: `batch-${randomUUID()}`,
    total_amount: total,
    payment_count: payments.length,
    description: 'November payroll',
    payments,
    ...overrides,
  } as InitiateBody
}

/** The PIN as the entity's user reads it: from the e-mail the notifier sent for the batch. */
export async function otpOf(tb: TestBank, p: TestPartner, bulkPaymentId: string): Promise<string> {
  const db = tb.bank.database.db
  const batch = await db.selectFrom('bulk_payments').select('id').where('partner_id', '=',
    p.partnerId).where('bulk_payment_id', '=', bulkPaymentId).executeTakeFirstOrThrow()
  const message = await db.selectFrom('notifier_messages').selectAll().where('key', '=',
    `bulk_otp:${batch.id}:1`).executeTakeFirstOrThrow()
  const otp = /one-time PIN is (\d{6})/.exec(message.body)?.[1]
  assert.ok(otp, 'the message carries the PIN')
  return otp
}

/** A 6-digit PIN that is not the right one. */
export function wrongOtp(otp: string): string {
  return String((Number(otp) + 1) % 1_000_000).padStart(6, '0')
}
