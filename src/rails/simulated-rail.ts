import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.ts'
import type { Rail, RailOutcome, RailPayment, RailReturn } from './rail.ts'

/**
 * Magic recipient values of the simulated rail (documented in the README) that let
 * partners test every outcome. Any other recipient is paid.
 */
export const magicRecipients = {
  /** The recipient's bank declines (e.g. account closed): the transfer ends `Failed`, hold released. */
  failed_account_number: '4000000002',
  /** No such account: the transfer ends `Invalid`, no money moves. */
  invalid_account_number: '4000000010',
  /** Paid, then returned by the recipient's bank at the next clearing run: `Reversed`, money credited back. */
  returned_account_number: '4000000028',
  /** A branch code no bank uses: `Invalid`. */
  invalid_branch_code: '000000',
} as const

// Behaves like a bank's rail, failures included, with no outside connection. Its
// decisions depend only on the recipient, so they are the same on every instance and
// after a restart; returns are found from the ledger itself (successful payments to the
// "returned" account that have not been reversed yet), so no state lives in memory.
export class SimulatedRail implements Rail {
  constructor(private readonly db: Kysely<Database>) {}

  async payRealTime(payment: RailPayment): Promise<RailOutcome> {
    return decide(payment)
  }

  async submitEftBatch(payments: RailPayment[]): Promise<Map<string, RailOutcome>> {
    return new Map(payments.map((p) => [p.tx_id, decide(p)]))
  }

  async collectReturns(): Promise<RailReturn[]> {
    const rows = await this.db
      .selectFrom('transactions as t')
      .select('t.id')
      .where('t.tx_type', 'in', ['transfer', 'bulk_payment'])
      .where('t.status', '=', 'Successful')
      .where('t.recipient_account', '=', magicRecipients.returned_account_number)
      .orderBy('t.id')
      .limit(1000)
      .execute()
    return rows.map((row) => ({ tx_id: row.id, reason: 'returned by the recipient bank (simulated)' }))
  }
}

function decide(payment: RailPayment): RailOutcome {
  if (payment.branch_code === magicRecipients.invalid_branch_code) {
    return { status: 'invalid', reason: 'unknown branch code (simulated)' }
  }
  switch (payment.account_number) {
    case magicRecipients.invalid_account_number:
      return { status: 'invalid', reason: 'recipient account does not exist (simulated)' }
    case magicRecipients.failed_account_number:
      return { status: 'failed', reason: 'recipient bank declined: account closed (simulated)' }
    default:
      return { status: 'accepted', reference: `SIM-${payment.payment_type}-${payment.tx_id.slice(0, 8)}` }
  }
}
