import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { Rail, RailOutcome, RailPayment, RailReturn } from './rail.ts'

/**
 * Magic recipient values of the simulated rail (documented in docs/guides/payments.md) that let
 * partners test every outcome. Any other recipient is paid.
 */
export const magicRecipients = {
  /**
   * The recipient's bank declines (e.g. account closed): the transfer ends `Failed`, hold released.
   */
  failed_account_number: '4000000002',
  /** No such account: the transfer ends `Invalid`, no money moves. */
  invalid_account_number: '4000000010',
  /**
   * Paid, then returned by the recipient's bank at the next clearing run: `Reversed`, money
   * credited back.
   */
  returned_account_number: '4000000028',
  /** A branch code no bank uses: `Invalid`. */
  invalid_branch_code: '000000',
} as const

/** The most returns one collectReturns call hands out; the rest follow in later calls. */
export const returns_batch_max = 1000

const returned_reason = 'returned by the recipient bank (simulated)'

// Behaves like a bank's rail, failures included, with no outside connection. Its
// decisions depend only on the recipient, so they are the same on every instance and
// after a restart. A payment it accepts for the "returned" recipient is recorded in its
// own table, `simulated_rail_returns` (as a real rail's recipient bank would queue the
// return message), and handed out by collectReturns until the bank acknowledges it. The
// rail never reads the bank's ledger: its state is its own, kept in the database so that
// every instance sees the same returns and none is lost in a restart.
export class SimulatedRail implements Rail {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async payRealTime(payment: RailPayment): Promise<RailOutcome> {
    const outcome = decide(payment)
    await this.recordReturns([[payment, outcome]])
    return outcome
  }

  async submitEftBatch(payments: RailPayment[]): Promise<Map<string, RailOutcome>> {
    const decided = payments.map((p) => [p, decide(p)] as const)
    await this.recordReturns(decided)
    return new Map(decided.map(([p, outcome]) => [p.tx_id, outcome]))
  }

  async collectReturns(): Promise<RailReturn[]> {
    const rows = await this.db
      .selectFrom('simulated_rail_returns')
      .select(['tx_id', 'reason'])
      .where('collected_at', 'is', null)
      .orderBy('created_at')
      .orderBy('tx_id')
      .limit(returns_batch_max)
      .execute()
    return rows.map((row) => ({ tx_id: row.tx_id, reason: row.reason }))
  }

  async acknowledgeReturns(txIds: readonly string[]): Promise<void> {
    if (txIds.length === 0) return
    await this.db
      .updateTable('simulated_rail_returns')
      .set({ collected_at: this.clock.now() })
      .where('tx_id', 'in', txIds)
      .where('collected_at', 'is', null)
      .execute()
  }

  /**
   * Queues the return of every accepted payment to the "returned" recipient. The rail's
   * calls are idempotent by tx_id (a recovered RTC is paid again), so a second record of
   * the same payment is dropped.
   */
  private async recordReturns(decided: ReadonlyArray<readonly [RailPayment,
      RailOutcome]>): Promise<void> {
    const returned = decided.filter(([p, outcome]) => outcome.status === 'accepted'
      && p.account_number === magicRecipients.returned_account_number)
    if (returned.length === 0) return
    const now = this.clock.now()
    await this.db
      .insertInto('simulated_rail_returns')
      .values(returned.map(([p]) => ({ tx_id: p.tx_id, reason: returned_reason, created_at: now })))
      .onConflict((oc) => oc.column('tx_id').doNothing())
      .execute()
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
      return { status: 'accepted',
        reference: `SIM-${payment.payment_type}-${payment.tx_id.slice(0, 8)}` }
  }
}
