import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import {
  collectionKey,
  type DebitCollectionOutcome,
  type DebitCollectionRequest,
  type DebitDispute,
  type DebitMandateOutcome,
  type DebitMandateRequest,
  type DebitRail,
} from './debit-rail.ts'

/**
 * Magic debtor account numbers of the simulated debit rail (documented in
 * docs/guides/debit-orders.md), so that partners can try every outcome. Any other account
 * authenticates its mandates at once and is always collected.
 */
export const magicDebtors = {
  /** The debtor's bank rejects the mandate. */
  mandate_rejected: '5000000001',
  /**
   * The mandate stays `pending_authentication` until a day after it was registered, then turns
   * `active`.
   */
  mandate_pending_a_day: '5000000002',
  /** Every collection fails: account closed (final, no retry). */
  account_closed: '5000000003',
  /**
   * Every attempt finds insufficient funds: retried until the order's tracking days run out, then
   * `failed`.
   */
  insufficient_funds: '5000000004',
  /** Collected, then disputed by the debtor 3 days later. */
  disputed: '5000000005',
  /**
   * `50000001NN`: the first NN attempts of each collection find insufficient funds (NN
   * from 01 to 99), the next one collects: e.g. 5000000102 is collected on the third
   * business day, the second retry.
   */
  insufficient_then_collects_prefix: '50000001',
  /** Always collected (as is any account number not listed here). */
  always_collects: '5000000000',
} as const

/** How long after a collection the `disputed` debtor disputes it. */
export const simulated_dispute_after_ms = 3 * 86_400_000
/** How long the `mandate_pending_a_day` debtor's bank takes to authenticate. */
export const simulated_authentication_ms = 86_400_000
/** The most disputes one collectDisputes call hands out; the rest follow in later calls. */
export const disputes_batch_max = 1000

const dispute_reason = 'the debtor disputed the collection at their bank (simulated)'

// Behaves like the debtors' banks, failures included, with no outside connection. Its
// answers depend only on the request (account number, attempt, when the mandate was
// presented) and the clock, so they are the same on every instance and after a restart.
// The one thing it must remember is a dispute still to come: a collection from the
// `disputed` debtor is recorded in its own table, `simulated_debit_disputes`, due three
// days later, and handed out by collectDisputes until the bank acknowledges it. The rail
// never reads the bank's tables.
export class SimulatedDebitRail implements DebitRail {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async authenticateMandate(mandate: DebitMandateRequest): Promise<DebitMandateOutcome> {
    switch (mandate.account_number) {
      case magicDebtors.mandate_rejected:
        return { status: 'rejected',
          reason: 'the debtor declined the mandate at their bank (simulated)' }
      case magicDebtors.mandate_pending_a_day: {
        const due = new Date(mandate.presented_at.getTime() + simulated_authentication_ms)
        return this.clock.now().getTime() >= due.getTime() ? { status: 'active' }
          : { status: 'pending', retry_after: due }
      }
      default:
        return { status: 'active' }
    }
  }

  async submitCollections(collections: DebitCollectionRequest[]): Promise<Map<string,
      DebitCollectionOutcome>> {
    const decided = collections.map((c) => [c, decideCollection(c)] as const)
    const disputed = decided.filter(([c, outcome]) => outcome.status === 'collected'
      && c.account_number === magicDebtors.disputed)
    if (disputed.length > 0) {
      const due = new Date(this.clock.now().getTime() + simulated_dispute_after_ms)
      await this.db
        .insertInto('simulated_debit_disputes')
        .values(
          disputed.map(([c, outcome]) => ({
            debit_order_id: c.debit_order_id,
            collection_date: c.collection_date,
            bank_reference: outcome.status === 'collected' ? outcome.bank_reference : '',
            reason: dispute_reason,
            disputed_at: due,
          })),
        )
        .onConflict((oc) => oc.columns(['debit_order_id', 'collection_date']).doNothing())
        .execute()
    }
    return new Map(decided.map(([c, outcome]) => [collectionKey(c), outcome]))
  }

  async collectDisputes(): Promise<DebitDispute[]> {
    const rows = await this.db
      .selectFrom('simulated_debit_disputes')
      .select(['debit_order_id', 'collection_date', 'bank_reference', 'reason', 'disputed_at'])
      .where('acknowledged_at', 'is', null)
      .where('disputed_at', '<=', this.clock.now())
      .orderBy('disputed_at')
      .orderBy('debit_order_id')
      .orderBy('collection_date')
      .limit(disputes_batch_max)
      .execute()
    return rows.map((row) => ({ ...row, disputed_at: new Date(row.disputed_at) }))
  }

  async acknowledgeDisputes(keys: readonly string[]): Promise<void> {
    const now = this.clock.now()
    for (const key of new Set(keys)) {
      const [orderId, date] = splitKey(key)
      await this.db
        .updateTable('simulated_debit_disputes')
        .set({ acknowledged_at: now })
        .where('debit_order_id', '=', orderId)
        .where('collection_date', '=', date)
        .where('acknowledged_at', 'is', null)
        .execute()
    }
  }

  /**
   * A debtor disputes a collection now (the sandbox operator's `bank debit dispute`): the
   * next collection run books it. A dispute already raised for it is left as it is.
   */
  async raiseDispute(dispute: {
      debit_order_id: string; collection_date: string; bank_reference: string }): Promise<void> {
    await this.db
      .insertInto('simulated_debit_disputes')
      .values({ ...dispute, reason: dispute_reason, disputed_at: this.clock.now() })
      .onConflict((oc) => oc.columns(['debit_order_id', 'collection_date']).doNothing())
      .execute()
  }
}

function decideCollection(c: DebitCollectionRequest): DebitCollectionOutcome {
  const account = c.account_number
  if (account === magicDebtors.account_closed) return { status: 'account_closed',
    reason: 'the debtor’s account is closed (simulated)' }
  if (account === magicDebtors.insufficient_funds) return { status: 'insufficient_funds',
    reason: 'insufficient funds in the debtor’s account (simulated)' }
  const failing = insufficientAttempts(account)
  if (c.attempt <= failing) return { status: 'insufficient_funds',
    reason: 'insufficient funds in the debtor’s account (simulated)' }
  return { status: 'collected', bank_reference: bankReference(c) }
}

/** For `50000001NN`, NN; else 0. */
function insufficientAttempts(account: string): number {
  const prefix = magicDebtors.insufficient_then_collects_prefix
  if (account.length !== prefix.length + 2 || !account.startsWith(prefix)) return 0
  const n = Number(account.slice(prefix.length))
  return Number.isInteger(n) ? n : 0
}

/** The same reference for the same collection on every instance: `SIMDO` and 12 hex digits. */
function bankReference(c: DebitCollectionRequest): string {
  const digest = createHash('sha256').update(`${collectionKey(c)}:${c.attempt}`).digest('hex')
  return `SIMDO${digest.slice(0, 12).toUpperCase()}`
}

function splitKey(key: string): [string, string] {
  const at = key.lastIndexOf(':')
  return [key.slice(0, at), key.slice(at + 1)]
}
