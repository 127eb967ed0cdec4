import { sql, type Kysely } from 'kysely'
import type { LedgerExecutor } from './ledger-tables.ts'
import { assert } from '../errors.ts'
import { cents } from './cents.ts'
import type { InternalAccount, Journal, JournalEntry } from './journal.ts'
import { newRowId } from './row-id.ts'

// What partners owe the bank (docs/guides/debit-orders.md). A disputed debit-order collection is
// reversed; when the credited account cannot cover the reversal, the account goes to zero
// (to its holds: money promised to pending payments stays promised) and the rest becomes
// the partner's debt, recovered first from the partner's later credits. No balance ever
// goes below zero. An account that is not active (frozen, blocked, dormant, closed) is
// debited by neither: a reversal's whole amount becomes the debt, and a credit to it pays
// nothing of a debt (RULINGS "Account lifecycle": no debits from it).
//
// In the ledger the debt is the internal account `partner_debt:<partner_id>`: a shortfall
// posts to it (negative: owed), a recovery posts back from the customer account that
// received a credit. `partner_debts.owed` mirrors it (so a credit need not sum postings to
// know whether anything is owed), and `ledger verify` checks that the two agree.
//
// Use inside one database transaction, after LedgerBatch.open has locked the accounts:
// open() then locks the partners' debt rows (accounts first, then debts, in id order, on
// every path, so that no two bookings deadlock), and flush() writes them back.

export function debtAccount(partnerId: string): InternalAccount {
  return `partner_debt:${partnerId}`
}

export class PartnerDebts {
  private readonly changed = new Set<string>()

  private constructor(
    private readonly trx: LedgerExecutor,
    private readonly owed: Map<string, bigint>,
    private readonly now: Date,
  ) {}

  /** Locks the debt rows of these partners for the rest of the transaction. */
  static async open(trx: LedgerExecutor, partnerIds: Iterable<string>,
      now: Date): Promise<PartnerDebts> {
    const ids = [...new Set(partnerIds)].sort()
    const owed = new Map<string, bigint>()
    if (ids.length > 0) {
      const rows = await trx
        .selectFrom('partner_debts')
        .select(['partner_id', 'owed'])
        .where('partner_id', '=', sql<string>`any(${ids}::uuid[])`)
        .orderBy('partner_id')
        .forUpdate()
        .execute()
      for (const row of rows) owed.set(row.partner_id, cents(row.owed))
    }
    for (const id of ids) if (!owed.has(id)) owed.set(id, 0n)
    return new PartnerDebts(trx, owed, now)
  }

  owedBy(partnerId: string): bigint {
    const owed = this.owed.get(partnerId)
    assert(owed !== undefined, `partner ${partnerId}'s debt was not locked`)
    return owed
  }

  /**
   * Takes `amount` back from an account, as much as its available balance allows (nothing
   * from an account that is not active), and records the rest as the partner's debt. Posts
   * only the customer's and the debt's side: the caller's journal entries are `entries`,
   * which this completes and posts. Returns what the account gave and what is now owed.
   */
  takeBack(
    batch: Journal,
    take: { account_id: string; partner_id: string; amount: bigint; tx_id: string;
      counter: Array<{ internal: InternalAccount; amount: bigint }> },
  ): { taken: bigint; shortfall: bigint } {
    assert(take.amount >= 0n, 'a take-back is never negative')
    const available = debitable(batch, take.account_id)
    const taken = available < take.amount ? (available > 0n ? available : 0n) : take.amount
    const shortfall = take.amount - taken
    const entries: JournalEntry[] = take.counter.map((c) => ({ ...c, tx_id: take.tx_id }))
    if (taken > 0n) entries.push({ account: take.account_id, amount: -taken, tx_id: take.tx_id })
    if (shortfall > 0n) entries.push({ internal: debtAccount(take.partner_id), amount: -shortfall,
      tx_id: take.tx_id })
    batch.post(entries)
    if (shortfall > 0n) this.set(take.partner_id, this.owedBy(take.partner_id) + shortfall)
    return { taken, shortfall }
  }

  /**
   * After a credit to `accountId`: recovers what its partner owes from the account's
   * available balance, as a `reversal` transaction of its own (nothing from an account that
   * is not active). Returns the cents recovered.
   */
  recover(batch: Journal, accountId: string, partnerId: string, parentTxId: string | null): bigint {
    const owed = this.owedBy(partnerId)
    if (owed === 0n) return 0n
    const available = debitable(batch, accountId)
    const recovered = available < owed ? available : owed
    if (recovered <= 0n) return 0n
    const txId = newRowId()
    batch.post([
      { account: accountId, amount: -recovered, tx_id: txId },
      { internal: debtAccount(partnerId), amount: recovered, tx_id: txId },
    ])
    batch.append({
      id: txId,
      account_id: accountId,
      parent_tx_id: parentTxId,
      tx_type: 'reversal',
      tx_payment_type: 'DEBIT_ORDER',
      status: 'Successful',
      amount: recovered,
      credit: 0n,
      debit: recovered,
      ref: 'partner debt recovered',
      own_ref: 'disputed debit order shortfall',
      added_by: 'system',
      posted: true,
    })
    this.set(partnerId, owed - recovered)
    return recovered
  }

  /** Writes the changed debt rows (in the same transaction as the batch's postings). */
  async flush(): Promise<void> {
    for (const partnerId of [...this.changed].sort()) {
      const owed = this.owedBy(partnerId)
      await this.trx
        .insertInto('partner_debts')
        .values({ partner_id: partnerId, owed, updated_at: this.now })
        .onConflict((oc) => oc.column('partner_id').doUpdateSet({ owed, updated_at: this.now }))
        .execute()
    }
    this.changed.clear()
  }

  private set(partnerId: string, owed: bigint): void {
    assert(owed >= 0n, `partner ${partnerId} would owe ${owed}`)
    this.owed.set(partnerId, owed)
    this.changed.add(partnerId)
  }
}

/** What a debt may take from the account: its available balance while it is active, else 0. */
function debitable(batch: Journal, accountId: string): bigint {
  return batch.account(accountId).status === 'active' ? batch.available(accountId) : 0n
}

/** Every partner's recorded debt, for `ledger verify` to hold against the postings. */
export async function recordedDebts(db: LedgerExecutor): Promise<Map<string, bigint>> {
  const rows = await db.selectFrom('partner_debts').select(['partner_id', 'owed']).execute()
  return new Map(rows.map((row) => [row.partner_id, cents(row.owed)]))
}
