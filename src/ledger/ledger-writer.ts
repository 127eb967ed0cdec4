import { sql, type RawBuilder } from 'kysely'
import type { Clock } from '../clock.ts'
import { isDatabaseUnavailable } from '../db/errors.ts'
import { inLane, Lane } from '../db/speed/prepared.ts'
import { assert, Conflict, Invalid, Unavailable, type BankError } from '../errors.ts'
import { GroupCommitter, isRetryableDatabaseError, type BatchOutcome } from './group-committer.ts'
import type { KnownAccounts } from './known-accounts.ts'
import type { Journal } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import { GuardFailed, LedgerBatch, StaleAccounts, type FlushGuard } from './ledger-batch.ts'
import { batch_attempts_max } from './ledger-limits.ts'
import type { LedgerExecutor, TxStatus } from './ledger-tables.ts'
import { statusesUnderLock } from './ledger-store.ts'
import { PartnerDebts } from './partner-debt.ts'
import {
  claimTransferKeys,
  insertKeysStatement,
  isKeyTaken,
  liveKeysStatement,
  releaseTransferKeys,
  transferKeysOf,
  type TransferKey,
} from './payment-keys.ts'

// The ledger's write engine: capabilities say what moves (a kind of payment and how it is
// journalled, payment-journals.ts); the writer decides how it is batched and committed.
// Each desk is a group committer (group-committer.ts): requests that arrive while a batch
// is being written go together in the next one, one database transaction for many.
//
// A payment desk (payments) takes requests that carry an idempotency key, in two steps of
// one transaction when all goes well:
//  - its batch starts from what this instance remembers of its accounts (known-accounts.ts)
//    when it can, so its write is its only statement, and that write checks the memory;
//  - the keys are claimed in the same write, on the condition that every key is new and no
//    key of a request refused for funds is live (a repeated request is a duplicate, whatever
//    its funds).
// A batch that finds a key taken is rolled back whole and written again claiming its keys
// first; one that finds a remembered account changed is written again with its accounts
// locked and read first. A hot account's next batch may start beside the one writing it
// (account_batches_max 2): it starts from the state that batch will leave and is written
// behind it on the same connection (db/speed/prepared.ts, lanes).
//
// A settlement desk (settlements) changes Pending transactions once their outcome is known
// (a rail's answer), under the accounts' locks, each at most once.

/** Group-commit and memory settings of the writer (config.ts reads them from the environment). */
export interface LedgerWriterSettings {
  /** Most requests in one batch. */
  batch_jobs_max: number
  /** Batches of one desk being written at once. */
  batches_in_flight_max: number
  /**
   * Requests that must wait before a batch starts beside one being written (group-committer.ts).
   */
  batch_overlap_jobs_min?: number
  /** Payment batches of one account written at once: 1, the default, or 2 (see the header). */
  account_batches_max?: number
  /** Requests waiting at most per desk; past it a request is answered 503 at once. */
  queue_jobs_max: number
  /** How long a used idempotency key makes a repeat a duplicate (24 h by default). */
  key_window_ms: number
  /**
   * What payment batches remember of their accounts, shared with the writers that forget what they
   * change.
   */
  known: KnownAccounts
  /** Told of every batch written, by desk: the metrics. */
  observeBatch?: (desk: string, size: number, seconds: number, ok: boolean) => void
  /** Told how each payment batch read its accounts: the metrics. */
  observeStart?: (start: 'remembered' | 'locked' | 'stale') => void
}

/**
 * A kind of payment the writer takes: how its journals are recorded, never how they are batched.
 */
export interface PaymentKind<P, R, T extends LedgerExecutor = LedgerExecutor> {
  /** The desk's name in the metrics and probes. */
  name: string
  /** The accounts its journals touch (locked in id order with the rest of its batch). */
  accountsOf(payment: P): readonly string[]
  /**
   * Its idempotency key: a repeat within the key window is answered as a duplicate of the first.
   */
  keyOf(payment: P): TransferKey
  /**
   * Why it cannot be taken at all, checked under the locks before its key; undefined when it can.
   */
  refusal(batch: Journal, payment: P): BankError | undefined
  /**
   * Records its journals; undefined when available is short (nothing recorded, its key stays free).
   */
  take(batch: Journal, payment: P): R | undefined
  /**
   * The account it credits whose partner may owe the bank (partner-debt.ts), recovered from
   * the credit first. A batch with one locks its accounts before its write, since partner
   * debts are locked after accounts on every path.
   */
  creditOf?(payment: P): { account: string; tx_id: string } | undefined
  /** The rows that commit with a batch's taken payments (payment advices); undefined when none. */
  alongside?(
    taken: Array<{ payment: P; value: R }>,
    now: Date,
  ): ((trx: T) => Promise<void>) | undefined
}

/** A change to a Pending transaction once its outcome is known, made at most once. */
export interface SettlementKind<S, R, T extends LedgerExecutor = LedgerExecutor> {
  name: string
  accountOf(settlement: S): string
  txOf(settlement: S): string
  /** Records the change, under the account's lock, while the transaction is still Pending. */
  settle(batch: Journal, settlement: S): R
  /**
   * The answer when the transaction is no longer Pending (settled meanwhile): nothing is written
   * twice.
   */
  settled(status: TxStatus, settlement: S): R
  /** The rows that commit with a batch's settlements; undefined when none. */
  alongside?(
    settled: Array<{ settlement: S; value: R }>,
    now: Date,
  ): ((trx: T) => Promise<void>) | undefined
}

/** One write of a batch, as a probe sees it. */
export interface WriteReport {
  desk: string
  /** How a payment batch claims its keys; `locked` for settlements. */
  mode: 'claim-in-write' | 'claim-first' | 'locked'
  /** The batch's first write (later ones retry it). */
  first: boolean
  /** Whether it started behind another batch of one of its accounts (see the header). */
  behind: boolean
  keys: TransferKey[]
  accounts: string[]
  /** Whether it locked and read its accounts first (not started from memory). */
  locked: boolean
  committed: boolean
}

/**
 * Watches the writer (tests, diagnostics): `beforeBatch` may hold a batch before it is
 * written; `written` is told of every write.
 */
export interface WriterProbe {
  beforeBatch?(desk: string, keys: TransferKey[]): Promise<void> | void
  written?(report: WriteReport): void
}

type Mode = 'claim-in-write' | 'claim-first'

type Outcomes<R> = BatchOutcome<R>[]

const overloaded = () => new Unavailable('the bank is busy; try again shortly')

const insufficientFunds = () =>
  Invalid.field('amount', 'insufficient funds: available balance does not cover amount plus fee')

/** What the writer opens its transactions on: the bank's Kysely (T: its transactions). */
export interface WriterDatabase<T extends LedgerExecutor> {
  transaction(): { execute<V>(callback: (trx: T) => Promise<V>): Promise<V> }
}

/** The writer's composed door alone (`write`): what a capability's service is given. */
export type ComposedWriter = Pick<LedgerWriter, 'write'>

export class LedgerWriter<T extends LedgerExecutor = LedgerExecutor> {
  /** The lane of the last payment batch started for each account still being written. */
  private readonly lanes = new Map<string, Lane>()
  private readonly probes = new Set<WriterProbe>()
  private readonly desks = new Map<string, { readonly pending: number }>()
  readonly known: KnownAccounts

  constructor(
    private readonly db: WriterDatabase<T>,
    private readonly clock: Clock,
    private readonly settings: LedgerWriterSettings,
  ) {
    this.known = settings.known
  }

  /** A desk for one kind of payment; `submit` answers each payment with its outcome. */
  payments<P, R>(kind: PaymentKind<P, R, T>): { submit(payment: P): Promise<R> } {
    const desk = new GroupCommitter<P, R>((batch) => this.paymentBatch(kind, batch), {
      ...this.committerOptions(kind.name),
      // Payouts (measured by the bench): a second batch only beside enough waiting.
      overlap_jobs_min: this.settings.batch_overlap_jobs_min,
      keysOf: (payment) => kind.accountsOf(payment),
      key_batches_max: this.settings.account_batches_max ?? 1,
    })
    this.desks.set(kind.name, desk)
    return desk
  }

  /** A desk for one kind of settlement; `submit` answers each with its outcome. */
  settlements<S, R>(kind: SettlementKind<S, R, T>): { submit(settlement: S): Promise<R> } {
    // Settlements, fewer and each after a rail call, start as they come.
    const desk = new GroupCommitter<S, R>((batch) => this.settlementBatch(kind, batch), {
      ...this.committerOptions(kind.name),
      keysOf: (settlement) => [kind.accountOf(settlement)],
    })
    this.desks.set(kind.name, desk)
    return desk
  }

  /**
   * The second door: a kind of journal recorded inside the caller's own transaction, beside
   * its business rows (Formance's BeginTX/Commit), for composed work that is not high-rate
   * (bulk funding, clearing chunks, debit-order runs, card clearings, deposits). The writer
   * locks the accounts in id order, reads what the kind asks for under those locks, records
   * its journals, writes them, and forgets the accounts in what payment batches remember
   * (the caller commits; a batch that guessed meanwhile is refused by its write's check).
   */
  async write<I, R>(trx: LedgerExecutor, kind: JournalKind<I, R>, input: I): Promise<R> {
    const accountIds = [...new Set(kind.accountsOf(input))]
    this.known.forget(accountIds)
    const started = performance.now()
    let committed = false
    try {
      const batch = await LedgerBatch.open(trx, this.clock, accountIds)
      const transactions = kind.transactionsOf
        ? await statusesUnderLock(trx, [...new Set(kind.transactionsOf(input))])
        : new Map()
      const held = accountIds.filter((id) => batch.has(id))
      const partners = held.map((id) => batch.account(id).partner_id)
      const debts = kind.debts ? await PartnerDebts.open(trx, partners, batch.now) : undefined
      const value = kind.record(batch, input, { transactions, debts })
      await batch.flush()
      await debts?.flush()
      committed = true
      return value
    } finally {
      this.known.forget(accountIds)
      this.settings.observeBatch?.(kind.name, 1, (performance.now() - started) / 1000, committed)
      if (this.probes.size > 0) this.reportLocked(kind.name, accountIds, committed)
    }
  }

  /** Requests waiting or being written at a desk. */
  pending(desk: string): number {
    return this.desks.get(desk)?.pending ?? 0
  }

  /** Adds a probe; returns its removal. */
  probe(probe: WriterProbe): () => void {
    this.probes.add(probe)
    return () => this.probes.delete(probe)
  }

  private committerOptions(name: string) {
    const observeBatch = this.settings.observeBatch
    const observe =
      observeBatch && ((size: number, s: number, ok: boolean) => observeBatch(name, size, s, ok))
    return {
      batch_jobs_max: this.settings.batch_jobs_max,
      batches_in_flight_max: this.settings.batches_in_flight_max,
      queue_jobs_max: this.settings.queue_jobs_max,
      overloaded,
      retryable: isRetryableDatabaseError,
      attempts_max: batch_attempts_max,
      isolatable: (error: unknown) => !isDatabaseUnavailable(error),
      ...(observe ? { observe } : {}),
    }
  }

  private report(report: WriteReport): void {
    for (const probe of this.probes) probe.written?.(report)
  }

  /**
   * A payment batch. With account_batches_max 2, a batch may start while another of this
   * instance writes one of its accounts (a hot account's next batch): it starts from the
   * state that batch will leave, remembered as that batch's write went out (takePayments),
   * and is written behind it on the same connection (prepared.ts, lanes), so PostgreSQL
   * runs it once that one has committed. Should that one fail, or not have sent its commit
   * yet when this one is ready (it then ends first, and this one takes a connection of its
   * own), this one finds the account as it is, or stale: its own race, not another
   * writer's, so the account is not paused and the guess not counted against guessing.
   */
  private async paymentBatch<P, R>(
    kind: PaymentKind<P, R, T>,
    payments: P[],
  ): Promise<Outcomes<R>> {
    for (const probe of this.probes) await probe.beforeBatch?.(kind.name, payments.map(kind.keyOf))
    const accountIds = [...new Set(payments.flatMap(kind.accountsOf))]
    let ahead: Lane | undefined
    for (const id of accountIds) ahead ??= this.lanes.get(id)
    const lane = new Lane()
    for (const id of accountIds) this.lanes.set(id, lane)
    try {
      return await inLane(lane, ahead, () =>
        this.paymentBatchOnce(kind, payments, ahead !== undefined),
      )
    } finally {
      lane.close()
      for (const id of accountIds) if (this.lanes.get(id) === lane) this.lanes.delete(id)
    }
  }

  /**
   * Most batches repeat no key, so the keys are claimed in the batch's one write. A batch
   * that finds a key taken is rolled back whole and written again claiming its keys first:
   * one round trip fewer for every batch, one more for the rare batch with a repeat. A batch
   * that started from remembered accounts and found one changed is written again with its
   * accounts locked and read first (known-accounts.ts).
   */
  private async paymentBatchOnce<P, R>(
    kind: PaymentKind<P, R, T>,
    payments: P[],
    behind: boolean,
  ): Promise<BatchOutcome<R>[]> {
    try {
      return await this.writePayments(kind, payments, 'claim-in-write', true, behind)
    } catch (error) {
      if (!(error instanceof GuardFailed)) throw error
      if (error instanceof StaleAccounts) {
        // A remembered account had changed: written again with its accounts locked and read
        // first, still claiming the keys in the write.
        if (!behind) this.known.pause(payments.flatMap(kind.accountsOf))
        this.settings.observeStart?.('stale')
        try {
          return await this.writePayments(kind, payments, 'claim-in-write', false)
        } catch (again) {
          if (!(again instanceof GuardFailed)) throw again
        }
      }
      // A key taken: written again claiming the keys first.
      return this.writePayments(kind, payments, 'claim-first')
    }
  }

  private async writePayments<P, R>(
    kind: PaymentKind<P, R, T>,
    payments: P[],
    mode: Mode,
    guess = true,
    behind = false,
  ): Promise<BatchOutcome<R>[]> {
    const outcomes: BatchOutcome<R>[] = new Array(payments.length)
    const accountIds = payments.flatMap(kind.accountsOf)
    const first = guess && mode === 'claim-in-write'
    // A batch that credits an account whose partner may owe the bank locks its partner debts
    // (partner-debt.ts), which every path locks after the accounts: so it locks its accounts
    // first, not in its write.
    const guessable = first && !(kind.creditOf && payments.some((p) => kind.creditOf!(p)))
    const write = { mode, first, behind }
    let written: LedgerBatch | undefined
    try {
      await this.db.transaction().execute(async (trx) => {
        const batch =
          (guessable && LedgerBatch.fromKnown(trx, this.clock, accountIds, this.known)) ||
          (await LedgerBatch.open(trx, this.clock, accountIds))
        written = batch
        if (first) this.settings.observeStart?.(batch.guessed ? 'remembered' : 'locked')
        await this.takePayments(trx, kind, batch, payments, mode, outcomes)
      })
    } catch (error) {
      this.known.forget(accountIds)
      if (written?.guessed && !behind) this.known.guessed(error instanceof StaleAccounts)
      if (this.probes.size > 0) this.reportPayments(kind, payments, write, written, false)
      // A key taken, found by the write's plain insert: as a failed guard (written again
      // claiming first).
      const keyTaken = isKeyTaken(error) && mode === 'claim-in-write'
      throw keyTaken ? new GuardFailed('a key of the batch is taken') : error
    }
    if (written!.guessed) this.known.guessed(false)
    this.known.remember(written!.accountStates())
    if (this.probes.size > 0) this.reportPayments(kind, payments, write, written, true)
    return outcomes
  }

  private reportPayments<P, R>(
    kind: PaymentKind<P, R, T>,
    payments: P[],
    write: Pick<WriteReport, 'mode' | 'first' | 'behind'>,
    written: LedgerBatch | undefined,
    committed: boolean,
  ): void {
    const locked = written !== undefined && !written.guessed
    const accounts = [...new Set(payments.flatMap(kind.accountsOf))]
    const keys = payments.map(kind.keyOf)
    this.report({ desk: kind.name, ...write, keys, accounts, locked, committed })
  }

  private async takePayments<P, R>(
    trx: T,
    kind: PaymentKind<P, R, T>,
    batch: LedgerBatch,
    payments: P[],
    mode: Mode,
    outcomes: BatchOutcome<R>[],
  ): Promise<void> {
    const debts = await openDebts(trx, kind, batch, payments)
    const keys = payments.map(kind.keyOf)
    const { claimants, duplicates } = byKey(kind, batch, payments, keys, outcomes)
    const claimFirst = mode === 'claim-first'
    const claimed = claimFirst ? await this.claimKeys(trx, keys, claimants, batch.now) : undefined
    const batchKeys = { payments, keys, claimants, claimed, debts }
    const took = takeEach(kind, batch, batchKeys, outcomes, duplicates)
    // A request refused for funds moved no money, so its key may be used again.
    if (claimed) await releaseTransferKeys(trx, took.released.map((k) => k.tx_id))
    const alongside = kind.alongside?.(took.taken, batch.now)
    // Most batches end with their write: its commit is sent with it (one round trip).
    const last = !debts && !alongside && duplicates.length === 0
    // The state this batch will leave, remembered as its write goes out, so that the next
    // batch of its accounts may start from it behind this one (paymentBatch); forgotten if
    // this one fails (writePayments).
    const overlaps = (this.settings.account_batches_max ?? 1) > 1
    if (overlaps && !claimed) this.known.remember(batch.accountStates())
    const guard = claimed ? undefined : this.keyGuard(took.taking, took.released, batch.now)
    await batch.flush(guard, { commit: last })
    if (last) return
    await debts?.flush()
    await alongside?.(trx)
    // Inside the transaction: should the batch be retried, it must not find its own keys.
    if (duplicates.length === 0) return
    await this.answerDuplicates(trx, keys, duplicates, outcomes, batch.now)
  }

  /**
   * What a batch that claims its keys in its write adds to it: the keys of the requests that
   * take money, inserted plainly (a key already there, live or expired, fails the statement:
   * isKeyTaken), and the condition that no key of a request refused for funds is live.
   */
  private keyGuard(taking: TransferKey[], refused: TransferKey[], now: Date): FlushGuard {
    const queries: RawBuilder<unknown>[] =
      taking.length > 0 ? [sql`k as (${insertKeysStatement(taking, now)})`] : []
    if (refused.length === 0) return { queries }
    queries.push(sql`r as (${liveKeysStatement(refused, this.keyCutoff(now))})`)
    return { queries, holds: sql`not exists (select 1 from r)` }
  }

  /**
   * A key used before this no longer counts: the duplicate window (configurable, 24 h by default).
   */
  private keyCutoff(now: Date): Date {
    return new Date(now.getTime() - this.settings.key_window_ms)
  }

  /** Claims the claimants' keys; returns the tx ids whose key was new (the rest: duplicates). */
  private claimKeys(trx: T, keys: TransferKey[], claimants: number[], now: Date) {
    return claimTransferKeys(trx, claimants.map((i) => keys[i]!), now, this.keyCutoff(now))
  }

  private async answerDuplicates<R>(
    trx: T,
    keys: TransferKey[],
    indexes: number[],
    outcomes: BatchOutcome<R>[],
    now: Date,
  ): Promise<void> {
    const cutoff = this.keyCutoff(now)
    const rows = await transferKeysOf(
      trx,
      [...new Set(indexes.map((i) => keys[i]!.client_tx_id))],
      cutoff,
    )
    for (const i of indexes) {
      const key = keys[i]!
      const original = rows.find(
        (r) => r.partner_id === key.partner_id && r.client_tx_id === key.client_tx_id,
      )
      if (!original) {
        // The first request with this key in the same batch was refused; so is this one.
        const first = outcomes.find(
          (o, j) => j !== i && o && !o.ok && keys[j]!.client_tx_id === key.client_tx_id,
        )
        outcomes[i] = first ?? {
          ok: false,
          error: Invalid.field('clientTxId', 'the request with this key was refused'),
        }
        continue
      }
      outcomes[i] = {
        ok: false,
        error: new Conflict(
          'duplicate transaction: this clientTxId was used within the duplicate window',
          [{ field: 'clientTxId', message: 'already used', tx_id: original.tx_id }],
        ),
      }
    }
  }

  private async settlementBatch<S, R>(
    kind: SettlementKind<S, R, T>,
    settlements: S[],
  ): Promise<BatchOutcome<R>[]> {
    // A settlement changes the accounts' holds: what payment batches remember of them is stale
    // (forgotten before, and again after, in case a payment batch remembered them meanwhile).
    const accountIds = settlements.map(kind.accountOf)
    this.known.forget(accountIds)
    let committed = false
    try {
      const outcomes = await this.settleUnderLock(kind, settlements)
      committed = true
      return outcomes
    } finally {
      this.known.forget(accountIds)
      if (this.probes.size > 0) this.reportLocked(kind.name, accountIds, committed)
    }
  }

  /** A write that locked its accounts first and claimed no keys (settlements, composed writes). */
  private reportLocked(desk: string, accounts: string[], committed: boolean): void {
    const write = { mode: 'locked' as const, first: true, behind: false, keys: [], locked: true }
    this.report({ desk, ...write, accounts, committed })
  }

  private async settleUnderLock<S, R>(
    kind: SettlementKind<S, R, T>,
    settlements: S[],
  ): Promise<BatchOutcome<R>[]> {
    return this.db.transaction().execute(async (trx) => {
      const batch = await LedgerBatch.open(trx, this.clock, settlements.map(kind.accountOf))
      // A clearing run recovers an RTC still Pending a minute after it was taken, so a slow
      // rail call may find its payout already settled. Every status change happens under the
      // account lock, so this read is final: a transaction no longer Pending is answered as
      // it stands (the rail's answer is the same for the same tx_id), never settled twice.
      const current = await statusesUnderLock(trx, settlements.map(kind.txOf))
      const settled: Array<{ settlement: S; value: R }> = []
      const outcomes = settlements.map((settlement): BatchOutcome<R> => {
        const status = current.get(kind.txOf(settlement))?.status
        assert(status !== undefined, `transaction ${kind.txOf(settlement)} has no row`)
        if (status !== 'Pending') return { ok: true, value: kind.settled(status, settlement) }
        const value = kind.settle(batch, settlement)
        settled.push({ settlement, value })
        return { ok: true, value }
      })
      await batch.flush()
      await kind.alongside?.(settled, batch.now)?.(trx)
      return outcomes
    })
  }
}

/**
 * The debts of the partners whose accounts the batch credits (a disputed debit order's
 * shortfall), paid from the credit first (partner-debt.ts); only batches with such credits ask.
 */
async function openDebts<P, R, T extends LedgerExecutor>(
  trx: T,
  kind: PaymentKind<P, R, T>,
  batch: LedgerBatch,
  payments: P[],
): Promise<PartnerDebts | undefined> {
  if (!kind.creditOf) return undefined
  const debtors: string[] = []
  for (const payment of payments) {
    const credit = kind.creditOf(payment)
    if (credit && batch.has(credit.account)) debtors.push(batch.account(credit.account).partner_id)
  }
  return debtors.length > 0 ? PartnerDebts.open(trx, debtors, batch.now) : undefined
}

/**
 * Refuses what cannot be taken at all, and splits the rest by key: the first payment with a
 * key in the batch claims it (a claimant); a repeat waits for its result (a duplicate).
 */
function byKey<P, R, T extends LedgerExecutor>(
  kind: PaymentKind<P, R, T>,
  batch: LedgerBatch,
  payments: P[],
  keys: TransferKey[],
  outcomes: BatchOutcome<R>[],
): { claimants: number[]; duplicates: number[] } {
  const firstWithKey = new Set<string>()
  const claimants: number[] = []
  const duplicates: number[] = []
  payments.forEach((payment, i) => {
    const refusal = kind.refusal(batch, payment)
    if (refusal) {
      outcomes[i] = { ok: false, error: refusal }
      return
    }
    const key = `${keys[i]!.partner_id}/${keys[i]!.client_tx_id}`
    if (firstWithKey.has(key)) duplicates.push(i)
    else {
      firstWithKey.add(key)
      claimants.push(i)
    }
  })
  return { claimants, duplicates }
}

interface Claimants<P> {
  payments: P[]
  keys: TransferKey[]
  claimants: number[]
  /** The tx ids whose key was new, when the keys were claimed first. */
  claimed: Set<string> | undefined
  debts: PartnerDebts | undefined
}

/**
 * Records each claimant's journals in request order, against the running balances: a key
 * claimed by another is a duplicate, a payment available does not cover is refused for funds
 * (its key released), and a credit first pays its partner's debt.
 */
function takeEach<P, R, T extends LedgerExecutor>(
  kind: PaymentKind<P, R, T>,
  batch: LedgerBatch,
  { payments, keys, claimants, claimed, debts }: Claimants<P>,
  outcomes: BatchOutcome<R>[],
  duplicates: number[],
) {
  const taking: TransferKey[] = []
  const released: TransferKey[] = []
  const taken: Array<{ payment: P; value: R }> = []
  for (const i of claimants) {
    const payment = payments[i]!
    if (claimed && !claimed.has(keys[i]!.tx_id)) {
      duplicates.push(i)
      continue
    }
    const value = kind.take(batch, payment)
    if (value === undefined) {
      outcomes[i] = { ok: false, error: insufficientFunds() }
      released.push(keys[i]!)
      continue
    }
    taking.push(keys[i]!)
    outcomes[i] = { ok: true, value }
    taken.push({ payment, value })
    const credit = debts && kind.creditOf?.(payment)
    if (!credit) continue
    debts.recover(batch, credit.account, batch.account(credit.account).partner_id, credit.tx_id)
  }
  return { taking, released, taken }
}
