import { randomUUID } from 'node:crypto'

/**
 * The payment of every transfer phase (bench/run.ts) and of bench/micro.ts: 100 cents by EFT, a new
 * clientTxId each.
 */
export function benchPayment(accountId: string) {
  return {
    account_id: accountId,
    clientTxId: randomUUID(),
    amount: 100,
    ref: 'bench',
    own_ref: 'bench payment',
    account_number: '62000000001',
    branch_code: '250655',
    name: 'Bench Recipient',
  }
}
