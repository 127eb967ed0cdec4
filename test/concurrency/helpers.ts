import { randomUUID } from 'node:crypto'
import { onboardPartner, type TestBank, type TestPartner } from '../support/harness.ts'

// Shared by the concurrency suites (each file runs its own bank on its own nats-server);
// `outcome` and the ledger check live in test/support.

export interface FundedAccount {
  partner: TestPartner
  accountId: string
}

/** A fresh partner whose approved root entity's first account holds `deposit` cents. */
export async function fundedAccount(tb: TestBank, deposit: number): Promise<FundedAccount> {
  const partner = await onboardPartner(tb, { approve: true })
  const { accounts } = await partner.client.accounts.getByEntity(
    { entity_id: partner.rootEntityId })
  const accountId = accounts[0]!.account_id
  if (deposit > 0) await tb.operator.accounts.deposit({ account_id: accountId, amount: deposit,
    ref: 'funding' })
  return { partner, accountId }
}

/** A transfer to an ordinary recipient (the simulated rail pays it). */
export function transferBody(accountId: string, amount: number, rtc: boolean,
    clientTxId: string = randomUUID()) {
  return {
    account_id: accountId,
    clientTxId,
    amount,
    ref: 'concurrency',
    own_ref: 'concurrency test',
    pay_and_clear: rtc,
    account_number: '62000000017',
    branch_code: '250655',
    name: 'Recipient',
  }
}
