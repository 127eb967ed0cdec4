import { sql, type Kysely } from 'kysely'
import type { DualControl } from '../audit/dual-control.ts'
import type { Caller } from '../auth/credential-store.ts'
import { formatTimestamp } from '../contract/format.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { Invalid, NotFound } from '../errors.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import {
  unclaimedPayout, unclaimedRows, type UnclaimedRow,
} from '../ledger/unclaimed-payout.ts'
import type { Database } from '../schema.ts'
import type { UnclaimedView } from './account-status-contract.ts'

// Unclaimed funds as operators see and pay them (docs/operators/operator-commands.md
// "Unclaimed funds"; docs/guides/payments.md "Closing an account"). Money that comes back for
// a closed account after it closed is never credited to it (ledger/unclaimed-funds.ts): the
// bank keeps it in its `unclaimed_funds` ledger account, by the payment it came back for,
// until an operator pays it, whole, to another account of the same customer that takes
// payments. Each payment is audited (every `ops.` operation is), above the dual-control
// threshold it waits for a second operator (as a deposit does), and the closed account is
// locked while it is read and paid, so the same money is never paid twice.

export interface UnclaimedPayment {
  status: 'paid' | 'pending_approval'
  approval_id: string | null
  tx_id: string | null
  pay_to_account_id: string
  amount: string
  paid: UnclaimedView
}

interface PayRequest {
  tx_id: string
  pay_to_account_id: string
  reason: string
}

export class UnclaimedFunds {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: ComposedWriter,
    private readonly dualControl: DualControl,
  ) {
    dualControl.register('unclaimed_pay', {
      approved: async (trx, asked, requestedBy) => {
        const request = { tx_id: String(asked.tx_id), reason: String(asked.reason),
          pay_to_account_id: String(asked.pay_to_account_id) }
        return this.payIn(trx, request, await this.locked(trx, request), requestedBy)
      },
    })
  }

  async list(accountId: string | undefined): Promise<{ unclaimed: UnclaimedView[] }> {
    const rows = await unclaimedRows(this.db, { accountId })
    return { unclaimed: rows.map(viewOf) }
  }

  /**
   * Pays it now, or, above the dual-control threshold, asks a second operator to: nothing
   * moves until approved, and the approval pays what is unclaimed then (404 if paid meanwhile).
   */
  async pay(caller: Caller, r: PayRequest): Promise<UnclaimedPayment> {
    return this.db.transaction().execute(async (trx) => {
      const source = await this.locked(trx, r)
      const paying = { pay_to_account_id: r.pay_to_account_id, amount: source.amount.toString(),
        paid: viewOf(source) }
      if (this.dualControl.needsApproval(source.amount)) {
        const approvalId = await this.dualControl.request(trx, caller, 'unclaimed_pay',
          r.pay_to_account_id, source.amount, { ...r })
        return { status: 'pending_approval', approval_id: approvalId, tx_id: null, ...paying }
      }
      const txId = await this.payIn(trx, r, source, caller.credentialId)
      return { status: 'paid', approval_id: null, tx_id: txId, ...paying }
    })
  }

  /**
   * What is unclaimed for `tx_id`, with the closed account and the payee locked; 404 when
   * nothing is, 400 when the payee is not another account of the same customer.
   */
  private async locked(trx: Kysely<Database>, r: PayRequest): Promise<UnclaimedRow> {
    const [seen] = await unclaimedRows(trx, { txId: r.tx_id })
    if (!seen) throw new NotFound('unclaimed funds for tx_id')
    // Both accounts locked in id order, as the ledger locks them (no deadlock with a
    // clearing chunk that holds both), then read again: another payment may have committed.
    await sql`select id from accounts where id in (${seen.account_id}, ${r.pay_to_account_id})
      order by id for update`.execute(trx)
    const [source] = await unclaimedRows(trx, { txId: r.tx_id })
    if (!source) throw new NotFound('unclaimed funds for tx_id')
    const payee = await trx.selectFrom('accounts').select(['partner_id', 'entity_id'])
      .where('id', '=', r.pay_to_account_id).executeTakeFirst()
    if (!payee || payee.partner_id !== source.partner_id
      || payee.entity_id !== source.entity_id || r.pay_to_account_id === source.account_id) {
      throw Invalid.field('pay_to_account_id',
        'must be another account of the customer whose account the money came back for')
    }
    return source
  }

  private async payIn(trx: Kysely<Database>, r: PayRequest, source: UnclaimedRow,
      addedBy: string): Promise<string> {
    const txId = await this.ledger.write(trx, unclaimedPayout, { source,
      amount: source.amount, payeeAccountId: r.pay_to_account_id, reason: r.reason, addedBy })
    noteCommitTargets(txId, source.tx_id, r.pay_to_account_id)
    return txId
  }
}

function viewOf(row: UnclaimedRow): UnclaimedView {
  return {
    tx_id: row.tx_id, account_id: row.account_id, entity_id: row.entity_id,
    partner_id: row.partner_id, amount: row.amount.toString(),
    payment_type: row.tx_payment_type, ref: row.ref, recipient_name: row.recipient_name,
    since: formatTimestamp(row.since),
  }
}
