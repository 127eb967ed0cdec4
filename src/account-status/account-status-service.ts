import { randomUUID } from 'node:crypto'
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { Forbidden, InvalidState, NotFound } from '../errors.ts'
import { appendEvents } from '../events/event-outbox.ts'
import { accountStatusChange } from '../ledger/account-status.ts'
import type { AccountStatus } from '../ledger/journal.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import { legalHoldRows } from '../ledger/legal-holds.ts'
import type { Database } from '../schema.ts'
import type { AccountStatusView } from './account-status-contract.ts'
import type { AccountStatusChangesTable } from './account-status-tables.ts'

// Changes of an account's status (RULINGS "Account lifecycle"; docs/guides/payments.md):
// who may make which, decided under the account's lock, the status written through the
// ledger's door (so every payment after the change commits sees it), the change kept in the
// account's history and announced (`account.status_changed`). Freezing what is frozen, or
// unfreezing what is active, changes nothing and answers the status: a retry is safe.

export type StatusAction = 'freeze' | 'unfreeze' | 'block' | 'reactivate' | 'dormant'

/**
 * Who asks: a partner (only for its own accounts), an operator of the bank, or the bank itself
 * (the dormancy job).
 */
export type StatusActor =
  | { kind: 'partner'; partnerId: string } | { kind: 'operator' } | { kind: 'system' }

type Change = Selectable<AccountStatusChangesTable>

/** Where each action may start, and where it goes. */
const moves: Record<StatusAction, { from: readonly AccountStatus[]; to: AccountStatus }> = {
  freeze: { from: ['active', 'dormant'], to: 'frozen' },
  unfreeze: { from: ['frozen'], to: 'active' },
  block: { from: ['active', 'frozen', 'dormant'], to: 'blocked' },
  reactivate: { from: ['frozen', 'blocked', 'dormant'], to: 'active' },
  dormant: { from: ['active'], to: 'dormant' },
}

const operator_only: ReadonlySet<StatusAction> = new Set(['block', 'reactivate'])

/** The transactions a customer makes: their absence for long makes an account dormant. */
export const customer_tx_types = ['transfer', 'bulk_payment', 'card'] as const

export class AccountStatusService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: ComposedWriter,
    private readonly clock: Clock,
  ) {}

  /** The account's status and its last change; another partner's account is not found. */
  async status(actor: StatusActor, accountId: string): Promise<AccountStatusView> {
    const account = await this.db.selectFrom('accounts').select(['id', 'partner_id', 'status'])
      .where('id', '=', accountId).executeTakeFirst()
    if (!account || !visibleTo(actor, account.partner_id)) throw new NotFound('account')
    return this.viewIn(this.db, accountId, account.status)
  }

  /** Makes the change `action` asks for, or answers the status when it has it already. */
  async change(actor: StatusActor, accountId: string, action: StatusAction,
      reason: string,
      /** Checked under the lock: the change is made only while it holds (the dormancy job's). */
      still?: (trx: Kysely<Database>) => Promise<boolean>): Promise<AccountStatusView> {
    return this.db.transaction().execute((trx) =>
      this.changeIn(trx, actor, accountId, action, reason, still))
  }

  /** `change` in the caller's transaction (a screening review's freeze, with the review). */
  async changeIn(trx: Kysely<Database>, actor: StatusActor, accountId: string,
      action: StatusAction, reason: string,
      still?: (trx: Kysely<Database>) => Promise<boolean>): Promise<AccountStatusView> {
    if (operator_only.has(action) && actor.kind !== 'operator') throw new Forbidden()
    if (action === 'dormant' && actor.kind !== 'system') throw new Forbidden()
    const account = await lockAccount(trx, accountId)
    if (!account || !visibleTo(actor, account.partner_id)) throw new NotFound('account')
    if (still && !(await still(trx))) return this.viewIn(trx, accountId, account.status)
    const last = await lastChange(trx, accountId)
    const move = moves[action]
    const from = account.status
    if (!mayMove(actor, action, from, last)) return this.viewIn(trx, accountId, from)
    if (from !== move.to) {
      await this.ledger.write(trx, accountStatusChange, { accountId, from, to: move.to })
    }
    const view = await recordChange(trx, { accountId, partnerId: account.partner_id, from,
      to: move.to, reason, by: actor.kind, at: this.clock.now(), accountSeq: account.last_seq })
    return { ...view, holds: await this.holdsOf(trx, accountId) }
  }

  /** The account's legal holds now, as its status shows them. */
  private async holdsOf(db: Kysely<Database>, accountId: string) {
    return (await legalHoldRows.ofAccount(db, accountId)).map((h) => ({
      hold_id: h.id, reference: h.reference, amount: h.amount.toString(),
      placed_at: formatTimestamp(new Date(h.placed_at)),
      expires_at: h.expires_at ? formatTimestamp(new Date(h.expires_at)) : null,
    }))
  }

  /** The view of an account's status, with its last change and its holds. */
  async viewIn(db: Kysely<Database>, accountId: string,
      status: AccountStatus): Promise<AccountStatusView> {
    return { ...viewOf(accountId, status, await lastChange(db, accountId)),
      holds: await this.holdsOf(db, accountId) }
  }
}

/** A change as recorded: in the account's history, and announced. */
export interface RecordedChange {
  accountId: string
  partnerId: string
  from: AccountStatus
  to: AccountStatus
  reason: string
  by: StatusActor['kind']
  at: Date
  accountSeq: string | bigint
}

/**
 * Keeps a change the ledger has written in the account's history and announces it
 * (`account.status_changed`); its view (without holds: the caller adds them).
 */
export async function recordChange(trx: Kysely<Database>,
    change: RecordedChange): Promise<AccountStatusView> {
  const { accountId, from, to, reason } = change
  const row = {
    id: randomUUID(), account_id: accountId, partner_id: change.partnerId,
    from_status: from, to_status: to, reason, changed_by: change.by,
    changed_at: change.at, account_seq: change.accountSeq,
  } satisfies Insertable<AccountStatusChangesTable>
  await trx.insertInto('account_status_changes').values(row).execute()
  const view = viewOf(accountId, to, row)
  await appendEvents(trx, [{
    type: 'account.status_changed', partner_id: change.partnerId, resource_id: accountId,
    occurred_at: row.changed_at, data: { account_id: accountId, from, to, reason,
      by: change.by, changed_at: view.changed_at },
  }])
  return view
}

/**
 * Whether the change is made (false: the account has the status already); refuses what the
 * actor may not do from `from`.
 */
function mayMove(actor: StatusActor, action: StatusAction, from: AccountStatus,
    last: Change | undefined): boolean {
  const move = moves[action]
  // A partner's freeze that the bank repeats becomes the bank's (the partner cannot lift it).
  const takeOver = action === 'freeze' && from === 'frozen' && actor.kind === 'operator'
    && last?.changed_by === 'partner'
  if (from === move.to && !takeOver) return false
  if (!move.from.includes(from) && !takeOver) {
    throw new InvalidState(`the account is ${from}: it cannot be ${pastOf(action)}`)
  }
  // Only the bank lifts a freeze the bank made (an operator's, or a screening review's).
  if (action === 'unfreeze' && actor.kind === 'partner' && last && last.changed_by !== 'partner') {
    throw new Forbidden('the bank froze this account: only the bank can unfreeze it')
  }
  return true
}

export function visibleTo(actor: StatusActor, partnerId: string): boolean {
  return actor.kind !== 'partner' || actor.partnerId === partnerId
}

function pastOf(action: StatusAction): string {
  return action === 'freeze' ? 'frozen' : action === 'unfreeze' ? 'unfrozen'
    : action === 'block' ? 'blocked' : action === 'dormant' ? 'made dormant' : 'reactivated'
}

/** The account under lock (the ledger takes the same lock again in this transaction). */
export async function lockAccount(trx: Kysely<Database>,
    accountId: string): Promise<LockedAccount | undefined> {
  const { rows } = await sql<LockedAccount>`
    select partner_id, entity_id, status, last_seq, balance, held from accounts
    where id = ${accountId} for update`.execute(trx)
  return rows[0]
}

export interface LockedAccount {
  partner_id: string
  entity_id: string
  status: AccountStatus
  last_seq: string | bigint
  balance: string | bigint
  held: string | bigint
}

export async function lastChange(db: Kysely<Database>,
    accountId: string): Promise<Change | undefined> {
  return db.selectFrom('account_status_changes').selectAll().where('account_id', '=', accountId)
    .orderBy('seq', 'desc').limit(1).executeTakeFirst()
}

function viewOf(accountId: string, status: AccountStatus,
    last: Pick<Change, 'reason' | 'changed_by' | 'changed_at'> | undefined): AccountStatusView {
  return {
    account_id: accountId, status,
    reason: last?.reason ?? null,
    changed_by: last?.changed_by ?? null,
    changed_at: last ? formatTimestamp(new Date(last.changed_at)) : null,
    holds: [],
  }
}
