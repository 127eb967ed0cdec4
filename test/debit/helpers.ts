import { randomUUID } from 'node:crypto'
import type { BankClient } from '../../src/client/index.ts'
import type { TestBank, TestPartner } from '../support/harness.ts'

// What the debit order tests share: request bodies of a mandate and of an order under it,
// and a mandate made active the way the bank makes it (its authentication job).

export type MandateBody = Parameters<BankClient['mandates']['create']>[0]
export type OrderBody = Parameters<BankClient['debitOrders']['create']>[0]

/** A debtor's account as both the mandate and its orders name it. */
export const debtor = {
  account_holder_name: 'Thandi Nkosi',
  account_number: '1234567890',
  account_type: 'cheque' as const,
  branch_code: '250655',
}

export function mandateBody(entityId: string, overrides: Record<string,
    unknown> = {}): MandateBody {
  return {
    entity_id: entityId,
    mandate_reference: `M-${randomUUID().slice(0, 8)}`,
    ...debtor,
    max_amount: 50_000,
    frequency: 'monthly',
    ...overrides,
  } as MandateBody
}

export function orderBody(entityId: string, mandateReference: string, overrides: Record<string,
    unknown> = {}): OrderBody {
  return {
    entity_id: entityId,
    clientTxId: randomUUID(),
    mandate_reference: mandateReference,
    amount: 15_000,
    collection_date: '2026-12-01',
    ...debtor,
    reference: 'Gym November',
    frequency: 'monthly',
    end_date: '2027-06-30',
    ...overrides,
  } as OrderBody
}

/** Registers a mandate and runs its authentication job (the default authenticator accepts it). */
export async function activeMandate(tb: TestBank, p: TestPartner, entityId: string,
    overrides: Record<string, unknown> = {}): Promise<string> {
  const body = mandateBody(entityId, overrides)
  await p.client.mandates.create(body)
  await tb.bank.services.jobRunner.runDue()
  return body.mandate_reference
}
