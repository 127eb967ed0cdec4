import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { onPartnerClock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { Conflict, Forbidden, Invalid, NotFound } from '../errors.ts'
import { lockExclusiveClaims } from '../jobs/job-store.ts'
import type { Database } from '../schema.ts'
import type { EntityRow } from '../entities/entity-service.ts'
import type { AccountRow } from '../accounts/account-service.ts'
import type { MovableClock } from './sandbox-clock.ts'
import type { ResetReply } from './sandbox-contract.ts'
import { sandbox_advance_job_kind, sandbox_partner_advance_job_kind } from './sandbox-service.ts'

// A partner's sandbox reset (`svc.sandbox.<partner_id>.reset`, `ops.sandbox.reset`). The
// ledger keeps every posting in per-account hash chains that also run through the bank's
// own accounts, so a partner's postings can never be deleted: a reset *retires* the
// partner's data instead. In one transaction a new partner is made for the archive
// ("<name> — sandbox data retired <time>": suspended, without credentials, NATS account or
// webhook endpoint), and every row the partner made moves to it by its `partner_id`; the
// partner keeps its configuration (credentials, NATS identity, limits, webhook endpoint and
// secret, card decision settings) and its root entity, whose accounts move like all others.
// An approved root entity then gets a fresh first account, as its approval opened one, so
// the partner looks as just onboarded. Its sandbox clock rejoins the bank's.
//
// What moves keeps its ids, balances and hash chains (no chain covers a partner id), so
// `ledger verify` stays clean; the archive's rows only ever reference the archive's rows:
// rows of the root entity that move (its accounts, users, cards, orders, batches) are
// re-pointed to a copy of it made for the archive. What the partner owes the bank
// (`partner_debts`) stays with it: its ledger account is `partner_debt:<partner_id>`, and
// moving the row would make the ledger and the record disagree.
//
// Nothing of the retired data reaches the partner afterwards: its webhook deliveries still
// pending are failed, the retired events and batches lose their own callback URL (a retired
// batch's later events would otherwise go there), queued jobs of the retired data run by
// the bank's clock, cards' versions are raised and the accounts forgotten by the ledger's
// memory, so that no instance decides on a remembered copy naming the partner.

/** Tables whose rows of the partner move to the archive, and how. */
interface Move {
  table: string
  /** The reply's count this table's rows make. */
  count?: keyof ResetCounts
  /** Also re-points `entity_id` from the root entity to the archive's copy. */
  entity?: boolean
  /** More columns set (SQL, beside `partner_id`). */
  set?: (ids: ResetIds) => RawBuilder<unknown>
  /** Rows that stay with the partner (SQL condition); the others move. */
  stays?: (ids: ResetIds) => RawBuilder<unknown>
}

interface ResetIds {
  partner: string
  root: string
  archive: string
  archiveRoot: string
}

export interface ResetCounts {
  entities: number
  users: number
  accounts: number
  transactions: number
  cards: number
  debit_orders: number
  bulk_payments: number
  events: number
}

export const retired_delivery_error = 'the sandbox data this event is of was retired (a reset)'

const rootOwned = (ids: ResetIds) => sql`owner_id = ${ids.root}::uuid`

/**
 * Every table with a `partner_id` whose rows are the partner's data, in the order they move:
 * accounts first (in id order, as the ledger locks them), then cards (as authorizations do).
 */
export const moved_tables: readonly Move[] = [
  { table: 'accounts', count: 'accounts', entity: true },
  { table: 'cards', count: 'cards', entity: true, set: () => sql`version = version + 1` },
  { table: 'card_requests', entity: true },
  { table: 'card_authorizations' },
  { table: 'entities', count: 'entities', stays: (ids) => sql`id = ${ids.root}::uuid` },
  { table: 'users', count: 'users', entity: true },
  { table: 'transactions', count: 'transactions' },
  { table: 'transfer_keys' },
  { table: 'payment_advices' },
  { table: 'legal_holds' },
  { table: 'account_status_changes' },
  { table: 'account_statements' },
  { table: 'incoming_payments' },
  { table: 'debit_mandates', entity: true },
  { table: 'debit_orders', count: 'debit_orders', entity: true },
  { table: 'debit_order_keys' },
  { table: 'bulk_payments', count: 'bulk_payments', entity: true,
    set: () => sql`callback_url = null` },
  // The root entity's KYB evidence stays with it; its users' KYC moves with them.
  { table: 'kyc_submissions', stays: rootOwned },
  { table: 'kyc_documents', stays: rootOwned },
  { table: 'kyb_profiles', stays: (ids) => sql`entity_id = ${ids.root}::uuid` },
  // Monitoring's alerts, cases and filed reports about the partner's customers.
  { table: 'monitoring_cases', entity: true },
  { table: 'monitoring_alerts', entity: true },
  { table: 'monitoring_reports' },
  // Sanctions screening's reviews of the partner's customers and payments.
  { table: 'screening_reviews', entity: true },
  { table: 'events', count: 'events', set: () => sql`endpoint_url = null` },
  { table: 'webhook_deliveries', set: () => sql`endpoint_url = null,
    last_error = case when state = 'pending' then ${retired_delivery_error} else last_error end,
    next_attempt_at = case when state = 'pending' then null else next_attempt_at end,
    state = case when state = 'pending' then 'failed' else state end` },
]

/**
 * Tables with a `partner_id` that stay with the partner (as its `partners` row does): its
 * configuration (its NATS limits among it; its webhook endpoint's circuit breaker too: a
 * receiver backed off or paused is as broken after the reset as before), and what it owes
 * the bank (see above). `sandbox_partner_clocks` loses the partner's row instead.
 */
export const kept_tables: readonly string[] = [
  'credentials', 'nats_accounts', 'nats_users', 'rate_limits', 'nats_limits',
  'card_decision_settings', 'webhook_endpoints', 'webhook_secrets', 'webhook_endpoint_health',
  'partner_debts', 'sandbox_partner_clocks',
]

/** What the reset needs of other capabilities. */
export interface ResetDependencies {
  db: Kysely<Database>
  clock: MovableClock | undefined
  /** Opens an entity's account as its approval does (accounts/account-service.ts). */
  openAccount(trx: Kysely<Database>, entity: EntityRow, kind: AccountRow['kind']):
    Promise<AccountRow>
  /** Makes the ledger's memory of these accounts stale on this instance (ledger-writer.ts). */
  forgetAccounts(ids: string[]): void
}

export class SandboxReset {
  constructor(private readonly deps: ResetDependencies) {}

  /**
   * The partner's own reset: without `confirm`, what a reset would retire (nothing changes);
   * with `confirm` naming the partner itself, the reset.
   */
  async partnerReset(partnerId: string, request: { confirm?: string | undefined }):
      Promise<ResetReply> {
    if (request.confirm === undefined) return this.preview(partnerId)
    if (request.confirm !== partnerId) throw Invalid.field('confirm',
      `must be your own partner id (${partnerId}) to retire your sandbox data; leave it out ` +
        'to see what a reset would retire')
    return this.reset(partnerId)
  }

  /** What a reset would retire now, changing nothing. */
  async preview(partnerId: string): Promise<ResetReply> {
    const clock = this.movable()
    const partner = await this.deps.db.selectFrom('partners').select(['id', 'root_entity_id'])
      .where('id', '=', partnerId).executeTakeFirst()
    if (!partner) throw new NotFound('partner')
    const ids = { partner: partnerId, root: partner.root_entity_id, archive: '', archiveRoot: '' }
    const counts = emptyCounts()
    for (const move of moved_tables) {
      if (!move.count) continue
      const { rows } = await sql<{ n: string | number }>`
        select count(*) as n from ${sql.table(move.table)}
        where partner_id = ${partnerId}::uuid ${staysNot(move, ids)}`.execute(this.deps.db)
      counts[move.count] = Number(rows[0]?.n ?? 0)
    }
    await clock.refresh()
    return { partner_id: partnerId, retired_to: null, retired: counts,
      root_entity_id: partner.root_entity_id, account: null,
      now: onPartnerClock(partnerId, () => clock.now()).toISOString() }
  }

  /** Retires the partner's sandbox data to a new archive partner (see above). */
  async reset(partnerId: string): Promise<ResetReply> {
    const clock = this.movable()
    const archive = randomUUID()
    const archiveRoot = randomUUID()
    noteCommitTargets(partnerId, archive)
    // By the bank's clock: the partner's is about to rejoin it.
    return onPartnerClock(undefined, async () => {
      await clock.refresh()
      const moved: string[] = []
      const reply = await this.deps.db.transaction().execute(async (trx) => {
        await noAdvanceRunning(trx)
        const partner = await trx.selectFrom('partners').selectAll().where('id', '=', partnerId)
          .forUpdate().executeTakeFirst()
        if (!partner) throw new NotFound('partner')
        const ids = { partner: partnerId, root: partner.root_entity_id, archive, archiveRoot }
        const now = clock.now()
        await createArchive(trx, partner, ids, now)
        moved.push(...await lockAccounts(trx, partnerId))
        const counts = await moveRows(trx, ids)
        await requeueOnBankClock(trx, partnerId)
        await clock.rejoinPartner(trx, partnerId)
        const account = await this.freshAccount(trx, partner.root_entity_id)
        return { partner_id: partnerId, retired_to: archive, retired: counts,
          root_entity_id: partner.root_entity_id, account, now: now.toISOString() }
      }).finally(() => this.deps.forgetAccounts(moved))
      return reply
    })
  }

  /** An approved root entity's fresh first account, opened as its approval opens one. */
  private async freshAccount(trx: Kysely<Database>, rootId: string) {
    const root = await trx.selectFrom('entities').selectAll().where('id', '=', rootId)
      .executeTakeFirstOrThrow()
    if (root.review_status !== 'approved') return null
    const opened = await this.deps.openAccount(trx, root, root.is_root ? 'pool' : 'standard')
    return { account_id: opened.id, account_number: opened.account_number }
  }

  private movable(): MovableClock {
    if (!this.deps.clock) throw new Forbidden('the bank is not in sandbox mode')
    return this.deps.clock
  }
}

function emptyCounts(): ResetCounts {
  return { entities: 0, users: 0, accounts: 0, transactions: 0, cards: 0, debit_orders: 0,
    bulk_payments: 0, events: 0 }
}

function staysNot(move: Move, ids: ResetIds): RawBuilder<unknown> {
  return move.stays ? sql`and not (${move.stays(ids)})` : sql``
}

/**
 * One advance or reset at a time: an advance walks the partner's jobs and moves its clock.
 * The claim lock is the one a starting advance takes (jobs/job-store.ts), held until this
 * transaction ends, so none starts meanwhile; one that is running is a 409.
 */
async function noAdvanceRunning(trx: Kysely<Database>): Promise<void> {
  await lockExclusiveClaims(trx)
  const running = await trx.selectFrom('jobs').select('id')
    .where('kind', 'in', [sandbox_advance_job_kind, sandbox_partner_advance_job_kind])
    .where('state', '=', 'running').where('lease_expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst()
  if (running) throw new Conflict('an advance of a sandbox clock is running (here or on ' +
    'another instance); reset when it has ended')
}

/** The archive partner, suspended, and its copy of the partner's root entity. */
async function createArchive(trx: Kysely<Database>,
    partner: { name: string; email: string }, ids: ResetIds, now: Date): Promise<void> {
  await trx.insertInto('partners').values({ id: ids.archive,
    name: `${partner.name} — sandbox data retired ${formatTimestamp(now)}`,
    email: partner.email, root_entity_id: ids.archiveRoot, created_at: now, suspended_at: now })
    .execute()
  // Every column the table has, so a column added later is copied too; not a root entity,
  // whose registration number is unique among roots.
  const { rows } = await sql<{ column_name: string }>`
    select column_name from information_schema.columns
    where table_schema = current_schema() and table_name = 'entities'
      and is_identity = 'NO' and is_generated = 'NEVER' and column_name not in ('id', 'partner_id', 'is_root')
    order by ordinal_position`.execute(trx)
  const columns = sql.join(rows.map((row) => sql.ref(row.column_name)))
  await sql`
    insert into entities (id, partner_id, is_root, ${columns})
    select ${ids.archiveRoot}::uuid, ${ids.archive}::uuid, false, ${columns}
    from entities where id = ${ids.root}::uuid`.execute(trx)
}

/** Locks the partner's accounts in id order, as the ledger does; answers their ids. */
async function lockAccounts(trx: Kysely<Database>, partnerId: string): Promise<string[]> {
  const rows = await trx.selectFrom('accounts').select('id').where('partner_id', '=', partnerId)
    .orderBy('id').forUpdate().execute()
  return rows.map((row) => row.id)
}

async function moveRows(trx: Kysely<Database>, ids: ResetIds): Promise<ResetCounts> {
  const counts = emptyCounts()
  for (const move of moved_tables) {
    const sets = [sql`partner_id = ${ids.archive}::uuid`]
    if (move.entity) sets.push(sql`entity_id = case when entity_id = ${ids.root}::uuid
      then ${ids.archiveRoot}::uuid else entity_id end`)
    if (move.set) sets.push(move.set(ids))
    const result = await sql`
      update ${sql.table(move.table)} set ${sql.join(sets)}
      where partner_id = ${ids.partner}::uuid ${staysNot(move, ids)}`.execute(trx)
    if (move.count) counts[move.count] = Number(result.numAffectedRows ?? 0)
  }
  return counts
}

/**
 * The partner's queued jobs are all of the retired data now, but for its recurring work
 * planned by its clock (keys ending `@<partner_id>`, which does the partner's part only):
 * they run by the bank's clock from here on, so the partner's advances never run them.
 */
async function requeueOnBankClock(trx: Kysely<Database>, partnerId: string): Promise<void> {
  await trx.updateTable('jobs').set({ clock_partner: '' })
    .where('clock_partner', '=', partnerId).where('state', '=', 'queued')
    .where('key', 'not like', `%@${partnerId}`).execute()
}
