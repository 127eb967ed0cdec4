import type { LedgerDatabase, LedgerExecutor } from './ledger-tables.ts'
import { cents, centsText } from './cents.ts'
import {
  accountHeads,
  postingsTotal,
  type AccountLedgerHead,
  type TransactionRow,
} from './ledger-store.ts'
import { rowHashHolds } from './tx-chain.ts'
import { debtAccount, recordedDebts } from './partner-debt.ts'
import {
  accountCheckpoints,
  chainRows,
  earlierTransactionsEnded,
  journalCountAbove,
  ledgerCheckpoint,
  postingSums,
  postingsHorizon,
  unbalancedJournalsAbove,
  writeCheckpoints,
  type AccountCheckpoint,
  type LedgerCheckpoint,
  type PostingSums,
} from './verification-store.ts'

// `ledger verify`, full or incremental (docs/operations.md, "Verifying the ledger").
//
// A full verify recomputes everything: every journal sums to zero, every account's balance
// is its postings, every hash chain from its first row, every hold and running balance. When
// it is clean it leaves checkpoints: per account, the last row it checked (its seq and hash),
// the posted order and running balance reached, its oldest row still Pending and the sum of
// its postings up to a horizon (a posting id); for the ledger, that horizon and the internal
// accounts' balances up to it.
//
// An incremental verify starts from them. Per account it reads the rows from the checkpoint's
// own row on (from the oldest row Pending at the checkpoint when that is older, since such a
// row may have settled since): the checkpoint's row must still hash to what the checkpoint
// recorded, and every later row must link to it, so a changed, removed or inserted row at or
// after the checkpoint is found. Balances are the checkpoint's sums plus the postings above
// the horizon; only journals with a posting above the horizon are summed. What it does not
// read it cannot check: a row before the window edited, or an old posting changed, is found
// by the next full verify. A clean incremental verify moves the checkpoints on.
//
// The horizon is sound only if no posting at or below it commits after the checkpoint: the
// verify reads the highest posting id, then waits until every transaction of the database
// that began before that read has ended (a posting's id is taken inside its transaction).
// When that wait runs out (`horizon_wait_ms`), the verify still checks but writes no
// checkpoint.

/** One mismatch `ledger verify` found (the `ops.ledger.verify` reply lists them). */
export interface LedgerProblem {
  kind: string
  account_id?: string
  tx_id?: string
  journal_id?: string
  message: string
}

/** What `ledger verify` checked and found; the operator's reply adds the audit chain's check. */
export interface LedgerReport {
  ok: boolean
  /** Whether it started from checkpoints (false: a full verify, also when none existed). */
  incremental: boolean
  /** When the checkpoints it started from were written; null for a full verify. */
  since: string | null
  /** Whether it left checkpoints for the next incremental verify (only when clean). */
  checkpoint_written: boolean
  accounts_checked: number
  transactions_checked: number
  journals_checked: number
  postings_total: string
  internal_balances: Record<string, string>
  problems: LedgerProblem[]
}

export interface VerifyOptions {
  /** Start from the last clean verify's checkpoints, when there are any. */
  incremental?: boolean
}

const verify_page_rows = 5000
const problems_max = 1000
/** How long a verify waits for transactions older than its horizon (then: no checkpoint). */
export const horizon_wait_ms = 30_000

type Report = (problem: LedgerProblem) => void

/** The verification; `db` is the bank's (a verify reads outside any transaction). */
export async function verifyLedger(
  db: LedgerDatabase,
  options: VerifyOptions,
): Promise<LedgerReport> {
  const problems: LedgerProblem[] = []
  const report: Report = (p) => {
    if (problems.length < problems_max) problems.push(p)
  }
  const from = options.incremental ? await ledgerCheckpoint(db) : undefined
  const checkpoints = from ? await accountCheckpoints(db) : new Map<string, AccountCheckpoint>()
  const { horizon, readAt } = await postingsHorizon(db)
  const settled = await earlierTransactionsEnded(db, readAt, horizon_wait_ms)
  const below = from?.postings_horizon ?? 0n
  const global = await verifyPostings(db, below, horizon, from, checkpoints, report)
  const accounts = await accountHeads(db)
  const next: AccountCheckpoint[] = []
  let transactionsChecked = 0
  for (const account of accounts) {
    const walked = await verifyAccount(db, account, checkpoints.get(account.id), global, report)
    transactionsChecked += walked.rows
    next.push(walked.checkpoint)
  }
  const ok = problems.length === 0
  const write = ok && settled
  if (write) {
    const ledger = { postings_horizon: horizon, internal: global.internalAtHorizon }
    await writeCheckpoints(db, { ...ledger, verified_at: new Date(), incremental: !!from }, next)
  }
  return {
    ok,
    incremental: from !== undefined,
    since: from ? from.verified_at.toISOString() : null,
    checkpoint_written: write,
    accounts_checked: accounts.length,
    transactions_checked: transactionsChecked,
    journals_checked: global.journals,
    postings_total: centsText(global.total),
    internal_balances: Object.fromEntries([...global.internal].map(([n, b]) => [n, centsText(b)])),
    problems,
  }
}

/** What the postings say, for the ledger and for each account's balance. */
interface PostingsView {
  journals: number
  total: bigint
  /** Each internal account's balance now. */
  internal: Map<string, bigint>
  /** Each internal account's balance over the postings up to the new horizon. */
  internalAtHorizon: Map<string, bigint>
  /** Postings above the old horizon, up to the new one, and above the new one. */
  recent: PostingSums
  later: PostingSums
  /** Whether each account's older postings come from its checkpoint. */
  fromCheckpoints: boolean
}

/**
 * The journals with a posting above `below` balance; all postings sum to zero; partners'
 * debts agree with their debt accounts. Below `below` the checkpoint's sums stand in.
 */
async function verifyPostings(
  db: LedgerExecutor,
  below: bigint,
  horizon: bigint,
  from: LedgerCheckpoint | undefined,
  checkpoints: Map<string, AccountCheckpoint>,
  report: Report,
): Promise<PostingsView> {
  const journals = await unbalancedJournalsAbove(db, below)
  for (const j of journals) {
    report({
      kind: 'journal_unbalanced',
      journal_id: j.journal_id,
      message: `postings sum to ${j.total}`,
    })
  }
  const journalsChecked = await journalCountAbove(db, below)
  const recent = await postingSums(db, below, horizon)
  const later = await postingSums(db, horizon > below ? horizon : below, null)
  const internalAtHorizon = addSums(from?.internal ?? new Map(), recent.internal)
  const internal = addSums(internalAtHorizon, later.internal)
  let total = recent.total + later.total
  for (const sum of from?.internal.values() ?? []) total += sum
  for (const checkpoint of checkpoints.values()) total += checkpoint.postings_sum
  if (total !== 0n) report({ kind: 'ledger_unbalanced', message: `all postings sum to ${total}` })
  await verifyDebts(db, internal, report)
  const fromCheckpoints = from !== undefined
  return {
    journals: journalsChecked,
    total,
    internal,
    internalAtHorizon,
    recent,
    later,
    fromCheckpoints,
  }
}

function addSums(a: Map<string, bigint>, b: Map<string, bigint>): Map<string, bigint> {
  const out = new Map(a)
  for (const [name, sum] of b) out.set(name, (out.get(name) ?? 0n) + sum)
  return out
}

/**
 * A partner's recorded debt (partner_debts) is what its `partner_debt:<id>` postings say
 * it owes, and no partner is ever owed by the debt account (over-recovered).
 */
async function verifyDebts(
  db: LedgerExecutor,
  internal: Map<string, bigint>,
  report: Report,
): Promise<void> {
  const recorded = await recordedDebts(db)
  const prefix = 'partner_debt:'
  const debtors = [...internal.keys()].filter((n) => n.startsWith(prefix))
  const partners = new Set([...recorded.keys(), ...debtors.map((n) => n.slice(prefix.length))])
  for (const partnerId of partners) {
    const posted = -(internal.get(debtAccount(partnerId)) ?? 0n)
    const owed = recorded.get(partnerId) ?? 0n
    if (posted !== owed || posted < 0n) {
      const message = `partner ${partnerId} owes ${owed} but its debt postings say ${posted}`
      report({ kind: 'debt_mismatch', message })
    }
  }
}

/** One account: its balance against its postings, then its chain from where it starts. */
async function verifyAccount(
  db: LedgerExecutor,
  account: AccountLedgerHead,
  checkpoint: AccountCheckpoint | undefined,
  postings: PostingsView,
  report: Report,
): Promise<{ rows: number; checkpoint: AccountCheckpoint }> {
  const id = account.id
  const recent = postings.recent.accounts.get(id) ?? 0n
  // An account without a checkpoint (opened since, or its row lost) is summed whole.
  const older = postings.fromCheckpoints
    ? (checkpoint?.postings_sum ??
      (await postingsTotal(db, id)) - recent - (postings.later.accounts.get(id) ?? 0n))
    : 0n
  const atHorizon = older + recent
  const posted = atHorizon + (postings.later.accounts.get(id) ?? 0n)
  const { balance, held } = account
  if (posted !== balance) {
    report({
      kind: 'balance_mismatch',
      account_id: id,
      message: `balance ${balance} but postings sum to ${posted}`,
    })
  }
  if (balance < 0n || held < 0n || held > balance) {
    report({ kind: 'below_zero', account_id: id, message: `balance ${balance}, held ${held}` })
  }
  const walk = new ChainWalk(account, checkpoint, report)
  const to = account.last_seq
  for (let from = walk.startSeq; from <= to;) {
    const rows = await chainRows(db, id, from, to, verify_page_rows)
    for (const row of rows) walk.row(row)
    if (rows.length < verify_page_rows) break
    from = cents(rows.at(-1)!.seq) + 1n
  }
  return { rows: walk.rows, checkpoint: walk.finish(atHorizon) }
}

interface PostedRow {
  order: bigint
  credit: bigint
  debit: bigint
  running: bigint
  id: string
}

/**
 * An account's chain walked from a starting row: each row's hash and link, the sequence
 * without gaps, statuses against postings, holds; at the end the head, the holds and the
 * running balances of the rows posted since the checkpoint.
 */
class ChainWalk {
  rows = 0
  readonly startSeq: bigint
  private expectedSeq: bigint
  /** The hash the next row must name; null before the first row of an anchored walk. */
  private prevSha: string | null
  private anchorSeen = false
  private holds = 0n
  private pendingSeq: bigint | null = null
  private readonly posted: PostedRow[] = []

  constructor(
    private readonly account: AccountLedgerHead,
    private readonly anchor: AccountCheckpoint | undefined,
    private readonly report: Report,
  ) {
    if (anchor && anchor.seq > 0n) {
      const pending = anchor.pending_seq
      this.startSeq = pending !== null && pending < anchor.seq ? pending : anchor.seq
      this.prevSha = null
    } else {
      this.startSeq = 1n
      this.prevSha = ''
      this.anchorSeen = true
    }
    this.expectedSeq = this.startSeq
  }

  row(row: TransactionRow): void {
    const id = this.account.id
    this.rows++
    const seq = cents(row.seq)
    if (seq !== this.expectedSeq) {
      this.report({
        kind: 'chain_gap',
        account_id: id,
        tx_id: row.id,
        message: `seq ${seq} where ${this.expectedSeq} was expected`,
      })
    }
    this.expectedSeq = seq + 1n
    const linked = this.prevSha === null || row.prev_sha === this.prevSha
    if (!linked || !rowHashHolds(row)) {
      this.report({
        kind: 'chain_broken',
        account_id: id,
        tx_id: row.id,
        message: 'tx_sha does not match the row and its predecessor',
      })
    }
    if (this.anchor && seq === this.anchor.seq) this.checkAnchor(row)
    this.prevSha = row.tx_sha
    if (row.status === 'Pending') {
      this.holds += cents(row.hold_amount)
      this.pendingSeq ??= seq
    }
    this.checkStatus(row)
  }

  private checkAnchor(row: TransactionRow): void {
    this.anchorSeen = true
    if (row.tx_sha !== this.anchor!.tx_sha) {
      const message = 'the row the last verify checked up to no longer has the hash it had then'
      this.report({
        kind: 'checkpoint_mismatch',
        account_id: this.account.id,
        tx_id: row.id,
        message,
      })
    }
  }

  // Money moved exactly for Successful and Reversed rows: a posted row shown as Failed, or a
  // Successful one that never posted, is an edited history. A card authorization reversed
  // before clearing never posted (card-journals.ts).
  private checkStatus(row: TransactionRow): void {
    const reversed = row.status === 'Reversed' && row.tx_type !== 'card'
    const settled = row.status === 'Successful' || reversed
    if ((row.posted_order !== null) !== settled) {
      const what = row.posted_order === null ? 'never posted' : 'posted'
      const message = `status ${row.status} but ${what}`
      this.report({ kind: 'status_mismatch', account_id: this.account.id, tx_id: row.id, message })
    }
    if (row.posted_order === null) return
    const order = cents(row.posted_order)
    if (order <= (this.anchor?.posted_order ?? 0n)) return
    const credit = cents(row.credit)
    const debit = cents(row.debit)
    this.posted.push({ order, credit, debit, running: cents(row.running_balance), id: row.id })
  }

  /** The end-of-chain checks; the checkpoint this walk reached. */
  finish(postingsSum: bigint): AccountCheckpoint {
    const { id, last_seq, last_sha, held, legal_held } = this.account
    if (!this.anchorSeen) {
      const message = `the row at seq ${this.anchor!.seq}, where the last verify stopped, is gone`
      this.report({ kind: 'checkpoint_mismatch', account_id: id, message })
    }
    const lastSha = this.prevSha ?? ''
    if (lastSha !== last_sha || this.expectedSeq - 1n !== last_seq) {
      this.report({
        kind: 'chain_head_mismatch',
        account_id: id,
        message: 'the account does not point at its last transaction',
      })
    }
    if (this.holds + legal_held !== held) {
      this.report({
        kind: 'hold_mismatch',
        account_id: id,
        message: `held ${held} but pending rows hold ${this.holds} and legal holds ${legal_held}`,
      })
    }
    const { order, running } = this.runningBalances()
    return {
      account_id: id,
      seq: this.expectedSeq - 1n,
      tx_sha: lastSha,
      posted_order: order,
      running_balance: running,
      pending_seq: this.pendingSeq,
      postings_sum: postingsSum,
    }
  }

  /** Each posted row's running balance, from the checkpoint's on; the last order and balance. */
  private runningBalances(): { order: bigint; running: bigint } {
    const id = this.account.id
    const rows = this.posted.sort((a, b) => (a.order < b.order ? -1 : 1))
    let running = this.anchor?.running_balance ?? 0n
    for (const row of rows) {
      running += row.credit - row.debit
      if (row.running !== running) {
        this.report({
          kind: 'running_balance_mismatch',
          account_id: id,
          tx_id: row.id,
          message: `running balance ${row.running}, expected ${running}`,
        })
        running = row.running
      }
    }
    const checked = rows.length > 0 || (this.anchor?.posted_order ?? 0n) > 0n
    if (checked && running !== this.account.balance) {
      this.report({
        kind: 'running_balance_mismatch',
        account_id: id,
        message: `last running balance ${running} but balance ${this.account.balance}`,
      })
    }
    return { order: rows.at(-1)?.order ?? this.anchor?.posted_order ?? 0n, running }
  }
}
