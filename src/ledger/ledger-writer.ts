import { sql, type RawBuilder } from 'kysely'
import { partnerAheadOn, type Clock } from '../clock.ts'
import { isDatabaseUnavailable } from '../db/errors.ts'
import { inLane, Lane } from '../db/speed/prepared.ts'
import {
  assert,
  Duplicate,
  IdempotencyKeyReused,
  InsufficientFunds,
  Invalid,
  Unavailable,
  type BankError,
  type FieldIssue,
} from '../errors.ts'
import { GroupCommitter, isRetryableDatabaseError, type BatchOutcome } from './group-committer.ts'
import { KnownAccounts } from './known-accounts.ts'
import type { Journal } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import { GuardFailed, LedgerBatch, StaleAccounts, type FlushGuard } from './ledger-batch.ts'
import { batch_attempts_max, known_accounts_default } from './ledger-limits.ts'
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
  type KeyOriginal,
  type TransferKey,
} from './payment-keys.ts'

// The ledger's write engine and the one door for money (README.md in this folder is its
// glossary): capabilities say what moves (a kind and how it is journalled, *-journals.ts);
// the writer decides how it is batched and committed. It has two entrances:
//  - desks (payments, settlements), for high-rate requests each answered on its own. Each
//    desk is a group committer (group-committer.ts): requests that arrive while a batch is
//    being written go together in the next one, one database transaction for many;
//  - the composed door (write), for a kind of journal recorded inside a capability's own
//    transaction, beside its business rows (see `write`).
//
// A payment desk (payments) takes requests that carry an idempotency key (transfers) or
// none (card authorizations, whose cards are rows of the kind's own: OwnRows), in two steps
// of one transaction when all goes well:
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
   * What payment batches remember of their accounts (known-accounts.ts): the writer's own,
   * made from the ledger's defaults unless given (a test's).
   */
  known?: KnownAccounts
  /** Told of every batch written, by desk: the metrics. */
  observeBatch?: (desk: string, size: number, seconds: number, ok: boolean) => void
  /** Told how each payment batch read its accounts, by desk: the metrics. */
  observeStart?: (start: BatchStart, desk: string) => void
}

/** How a payment batch read its accounts (stale: remembered, found changed, written again). */
export type BatchStart = 'remembered' | 'locked' | 'stale'

/** What one desk may set for itself instead of the writer's settings (a card desk's sizes). */
export type DeskSettings = Partial<
  Pick<LedgerWriterSettings, 'batch_jobs_max' | 'batches_in_flight_max' | 'queue_jobs_max'>
> & {
  /** Requests that must wait before a batch starts beside one being written. */
  overlap_jobs_min?: number
  /** Whole tries of a batch that met a deadlock or a serialization failure. */
  attempts_max?: number
  /** The 503 a request meets when the desk's queue is full. */
  overloaded?: () => Error
  /**
   * Batches of one account written at once (the writer's account_batches_max unless set): a
   * kind whose own rows are remembered only once a batch commits sets 1, since a batch
   * started behind another would find them changed.
   */
  account_batches_max?: 1 | 2
}

/**
 * Rows of a kind's own that its payments are decided on beside their accounts (a card, with
 * what it has spent), read with them and written in the batch's one statement. A batch starts
 * from the kind's memory of them when it has every one (no statement before the write, whose
 * guard checks they are unchanged), else locks and reads them first, before the accounts
 * they name. `S` is a batch's state of them (its decisions included).
 */
export interface OwnRows<P, S, T extends LedgerExecutor = LedgerExecutor> {
  /** The rows a payment is decided on: its desk groups payments by them, as by accounts. */
  idsOf(payment: P): readonly string[]
  /** Copies of the remembered rows (no statement); undefined unless every one is remembered. */
  remembered(payments: P[], now: Date): S | undefined
  /** Locks and reads the rows: the first statement of the batch's transaction. */
  lock(trx: T, payments: P[], now: Date): Promise<S>
  /** The accounts the rows name: the batch's accounts. */
  accountsOf(state: S): string[]
  /**
   * What the batch's one write adds: its rows' inserts and, when they were remembered, the
   * check that each is unchanged (the statement fails, GuardFailed, unless it holds).
   */
  write(state: S, remembered: boolean): FlushGuard
  /** Statements after the write (rows changed beyond it); undefined when none. */
  after(state: S): ((trx: T) => Promise<void>) | undefined
  /** The write was made: what the callers' commit hooks are told of it. */
  written(state: S): void
  /**
   * The rows are remembered as the batch leaves them: as its write goes out (so that the
   * next batch of its accounts may start behind it from them), and again once it commits.
   */
  committed(state: S, remembered: boolean): void
  /** The batch failed: its payments' rows are forgotten. */
  failed(payments: P[]): void
}

/**
 * A kind of payment the writer takes: how its journals are recorded, never how they are batched.
 */
export interface PaymentKind<P, R, T extends LedgerExecutor = LedgerExecutor, S = undefined> {
  /** The desk's name in the metrics and probes. */
  name: string
  /**
   * The accounts its journals touch (locked in id order with the rest of its batch). A kind
   * with rows of its own names those it knows before reading them (its desk groups by them);
   * its batch's accounts are those its rows name.
   */
  accountsOf(payment: P): readonly string[]
  /**
   * Its idempotency key: a repeat within the key window is answered as a duplicate of the
   * first. A kind without one (a card authorization) claims no key.
   */
  keyOf?(payment: P): TransferKey
  /**
   * How a repeat of a key differs from the request that used it first, as that request's
   * transaction recorded it: one issue per differing field; none for a retry (a duplicate).
   * Without it every repeat is a duplicate.
   */
  differences?(payment: P, original: KeyOriginal): FieldIssue[]
  /** Rows of its own, decided on with the accounts (OwnRows). */
  rows?: OwnRows<P, S, T>
  /**
   * Why it cannot be taken at all, checked under the locks before its key; undefined when it
   * can. `rows` is the batch's state of the kind's own rows (undefined without them).
   */
  refusal(batch: Journal, payment: P, rows: S): BankError | undefined
  /**
   * Records its journals; undefined when available is short (nothing recorded, its key stays
   * free).
   */
  take(batch: Journal, payment: P, rows: S): R | undefined
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
  new InsufficientFunds('amount', 'available balance does not cover amount plus fee')

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
  private readonly starts = new Map<string, Record<BatchStart, number>>()
  /** The payment batches of this writer writing each account now (see startBatch). */
  private readonly writing = new Map<string, number>()
  /** Payment batches started on each account while any writes it (see startBatch). */
  private readonly writingStarts = new Map<string, number>()
  readonly known: KnownAccounts

  constructor(
    private readonly db: WriterDatabase<T>,
    private readonly clock: Clock,
    private readonly settings: LedgerWriterSettings,
  ) {
    this.known = settings.known ?? new KnownAccounts(known_accounts_default)
  }

  /**
   * A desk for one kind of payment; `submit` answers each payment with its outcome. `desk`
   * overrides the writer's sizes for this desk alone.
   */
  payments<P, R, S = undefined>(
    kind: PaymentKind<P, R, T, S>,
    desk: DeskSettings = {},
  ): { submit(payment: P): Promise<R> } {
    const rows = kind.rows
    const { account_batches_max, ...sizes } = desk
    const committer = new GroupCommitter<P, R>((batch) => this.paymentBatch(kind, batch), {
      ...this.committerOptions(kind.name),
      // Payouts (measured by the bench): a second batch only beside enough waiting.
      overlap_jobs_min: this.settings.batch_overlap_jobs_min,
      ...sizes,
      keysOf: rows ? (p) => [...rows.idsOf(p), ...kind.accountsOf(p)] : kind.accountsOf,
      key_batches_max: account_batches_max ?? this.settings.account_batches_max ?? 1,
    })
    this.desks.set(kind.name, committer)
    return committer
  }

  /** How the payment batches of a desk read their accounts, so far (tests, diagnostics). */
  startsOf(desk: string): Readonly<Record<BatchStart, number>> {
    return { ...(this.starts.get(desk) ?? { remembered: 0, locked: 0, stale: 0 }) }
  }

  private started(desk: string, start: BatchStart): void {
    let counts = this.starts.get(desk)
    if (!counts) this.starts.set(desk, (counts = { remembered: 0, locked: 0, stale: 0 }))
    counts[start]++
    this.settings.observeStart?.(start, desk)
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
      // Read under the lock only if its account is one the write holds.
      for (const [txId, row] of transactions) {
        assert(batch.has(row.account_id), `transaction ${txId} is of an account not locked`)
      }
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
      clockOf: () => partnerAheadOn(this.clock),
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
  private async paymentBatch<P, R, S>(
    kind: PaymentKind<P, R, T, S>,
    payments: P[],
  ): Promise<Outcomes<R>> {
    const keys = kind.keyOf ? payments.map(kind.keyOf) : []
    for (const probe of this.probes) await probe.beforeBatch?.(kind.name, keys)
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
   * that started from remembered accounts (or rows) and found one changed is written again
   * with them locked and read first (known-accounts.ts).
   */
  private async paymentBatchOnce<P, R, S>(
    kind: PaymentKind<P, R, T, S>,
    payments: P[],
    behind: boolean,
  ): Promise<BatchOutcome<R>[]> {
    try {
      return await this.writePayments(kind, payments, 'claim-in-write', true, behind)
    } catch (error) {
      if (!(error instanceof GuardFailed)) throw error
      // Without keys, a failed guard is a remembered row found changed.
      if (error instanceof StaleAccounts || !kind.keyOf) {
        // Remembered state had changed: written again locked and read first, still claiming
        // the keys in the write.
        this.started(kind.name, 'stale')
        try {
          return await this.writePayments(kind, payments, 'claim-in-write', false)
        } catch (again) {
          if (!(again instanceof GuardFailed) || !kind.keyOf) throw again
        }
      }
      // A key taken: written again claiming the keys first.
      return this.writePayments(kind, payments, 'claim-first')
    }
  }

  private async writePayments<P, R, S>(
    kind: PaymentKind<P, R, T, S>,
    payments: P[],
    mode: Mode,
    guess = true,
    behind = false,
  ): Promise<BatchOutcome<R>[]> {
    const outcomes: BatchOutcome<R>[] = new Array(payments.length)
    const first = guess && mode === 'claim-in-write'
    // A batch that credits an account whose partner may owe the bank locks its partner debts
    // (partner-debt.ts), which every path locks after the accounts: so it locks its accounts
    // first, not in its write.
    const guessable = first && !(kind.creditOf && payments.some((p) => kind.creditOf!(p)))
    const write = { mode, first, behind }
    let opened: Opened<S> | undefined
    const writing: Writing = { accounts: [] }
    try {
      await this.db.transaction().execute(async (trx) => {
        opened = await this.startBatch(trx, kind, payments, { guessable, behind, writing })
        if (first) this.started(kind.name, opened.batch.guessed ? 'remembered' : 'locked')
        await this.takePayments(trx, kind, opened, payments, mode, outcomes)
      })
    } catch (error) {
      this.failedPayments(kind, payments, opened, error, behind)
      if (this.probes.size > 0) this.reportPayments(kind, payments, write, opened, false)
      // A key taken, found by the write's plain insert: as a failed guard (written again
      // claiming first).
      const keyTaken = isKeyTaken(error) && mode === 'claim-in-write'
      throw keyTaken ? new GuardFailed('a key of the batch is taken') : error
    } finally {
      this.endWriting(writing.accounts)
    }
    const { batch, rows } = opened!
    if (batch.guessed) this.known.guessed(false)
    this.known.remember(batch.accountStates())
    kind.rows?.committed(rows, batch.guessed)
    if (this.probes.size > 0) this.reportPayments(kind, payments, write, opened, true)
    return outcomes
  }

  /**
   * Opens a payment batch: from the remembered accounts (and rows) when it may and every one
   * is remembered, else its rows and accounts locked and read. A batch does not start from
   * memory on an account another batch of this writer is writing (it would find it changed),
   * unless it is written behind that one (paymentBatch).
   */
  private async startBatch<P, R, S>(
    trx: T,
    kind: PaymentKind<P, R, T, S>,
    payments: P[],
    { guessable, behind, writing }: { guessable: boolean; behind: boolean; writing: Writing },
  ): Promise<Opened<S>> {
    const own = kind.rows
    if (guessable) {
      const rows = own?.remembered(payments, this.clock.now())
      const accounts = own ? rows && own.accountsOf(rows) : payments.flatMap(kind.accountsOf)
      const free = accounts && (behind || !accounts.some((id) => this.writing.has(id)))
      const batch = free && LedgerBatch.fromKnown(trx, this.clock, accounts, this.known)
      if (batch) return this.beginWriting(writing, { batch, rows: rows as S, accounts: accounts! })
    }
    const rows = own ? await own.lock(trx, payments, this.clock.now()) : (undefined as S)
    const accounts = own ? own.accountsOf(rows) : payments.flatMap(kind.accountsOf)
    // Marked written before the accounts' lock is asked for: a batch that would start from
    // memory meanwhile locks instead.
    const unopened = { batch: undefined as LedgerBatch | undefined, rows, accounts }
    const opening = this.beginWriting(writing, unopened)
    const batch = await LedgerBatch.open(trx, this.clock, opening.accounts)
    return { ...opening, batch }
  }

  /** Marks the batch's accounts written by it, and notes which batches had started on each. */
  private beginWriting<O extends { accounts: string[] }>(
    writing: Writing,
    opened: O,
  ): O & { seen: number[] } {
    const accounts = [...new Set(opened.accounts)]
    writing.accounts = accounts
    for (const id of accounts) {
      this.writing.set(id, (this.writing.get(id) ?? 0) + 1)
      this.writingStarts.set(id, (this.writingStarts.get(id) ?? 0) + 1)
    }
    const seen = accounts.map((id) => this.writingStarts.get(id)!)
    return Object.assign(opened, { accounts, seen })
  }

  private endWriting(accounts: readonly string[]): void {
    for (const id of accounts) {
      const n = (this.writing.get(id) ?? 1) - 1
      if (n > 0) this.writing.set(id, n)
      else this.writing.delete(id)
    }
    // Bounded: the counts are compared only while a batch that started from memory fails.
    if (this.writingStarts.size > 10_000 && this.writing.size === 0) this.writingStarts.clear()
  }

  /**
   * A failed batch's accounts and rows are forgotten. One that started from memory and found
   * an account changed pauses guessing on it, unless another batch of this writer started on
   * it meanwhile (its own race, not another writer's) or it ran behind one (paymentBatch).
   */
  private failedPayments<P, R, S>(
    kind: PaymentKind<P, R, T, S>,
    payments: P[],
    opened: Opened<S> | undefined,
    error: unknown,
    behind: boolean,
  ): void {
    const accounts = opened?.accounts ?? payments.flatMap(kind.accountsOf)
    this.known.forget(accounts)
    kind.rows?.failed(payments)
    if (!opened?.batch.guessed || behind) return
    const raced = accounts.some((id, i) => this.writingStarts.get(id) !== opened.seen[i])
    if (raced) return
    const stale = error instanceof StaleAccounts
    if (stale) this.known.pause(accounts)
    this.known.guessed(stale)
  }

  private reportPayments<P, R, S>(
    kind: PaymentKind<P, R, T, S>,
    payments: P[],
    write: Pick<WriteReport, 'mode' | 'first' | 'behind'>,
    opened: Opened<S> | undefined,
    committed: boolean,
  ): void {
    const locked = opened?.batch !== undefined && !opened.batch.guessed
    const accounts = opened?.accounts ?? [...new Set(payments.flatMap(kind.accountsOf))]
    const keys = kind.keyOf ? payments.map(kind.keyOf) : []
    this.report({ desk: kind.name, ...write, keys, accounts, locked, committed })
  }

  private async takePayments<P, R, S>(
    trx: T,
    kind: PaymentKind<P, R, T, S>,
    { batch, rows }: Opened<S>,
    payments: P[],
    mode: Mode,
    outcomes: BatchOutcome<R>[],
  ): Promise<void> {
    const debts = await openDebts(trx, kind, batch, payments)
    const keys = kind.keyOf ? payments.map(kind.keyOf) : undefined
    const { claimants, duplicates } = byKey(kind, batch, payments, keys, outcomes, rows)
    const claimFirst = mode === 'claim-first' && keys !== undefined
    const claimed = claimFirst ? await this.claimKeys(trx, keys, claimants, batch.now) : undefined
    const batchKeys = { payments, keys, claimants, claimed, debts, rows }
    const took = takeEach(kind, batch, batchKeys, outcomes, duplicates)
    // A request refused for funds moved no money, so its key may be used again.
    if (claimed) await releaseTransferKeys(trx, took.released.map((k) => k.tx_id))
    const alongside = kind.alongside?.(took.taken, batch.now)
    const after = kind.rows?.after(rows)
    // Most batches end with their write: its commit is sent with it (one round trip).
    const last = !debts && !alongside && !after && duplicates.length === 0
    // The state this batch will leave, remembered as its write goes out, so that the next
    // batch of its accounts may start from it behind this one (paymentBatch); forgotten if
    // this one fails (writePayments).
    const overlaps = (this.settings.account_batches_max ?? 1) > 1
    if (overlaps && !claimed) {
      this.known.remember(batch.accountStates())
      kind.rows?.committed(rows, batch.guessed)
    }
    await batch.flush(this.writeGuard(kind, { batch, rows }, keys, claimed, took), { commit: last })
    kind.rows?.written(rows)
    if (last) return
    await debts?.flush()
    await alongside?.(trx)
    await after?.(trx)
    // Inside the transaction: should the batch be retried, it must not find its own keys.
    if (duplicates.length === 0) return
    await this.answerDuplicates(trx, kind, { payments, keys: keys! }, duplicates, outcomes,
      batch.now)
  }

  /** The guard of a payment batch's write: its keys' (unless claimed first) and its rows'. */
  private writeGuard<P, R, S>(
    kind: PaymentKind<P, R, T, S>,
    { batch, rows }: Pick<Opened<S>, 'batch' | 'rows'>,
    keys: TransferKey[] | undefined,
    claimed: Set<string> | undefined,
    took: { taking: TransferKey[]; released: TransferKey[] },
  ): FlushGuard | undefined {
    const keyGuard =
      claimed || !keys ? undefined : this.keyGuard(took.taking, took.released, batch.now)
    return bothGuards(keyGuard, kind.rows?.write(rows, batch.guessed))
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

  /**
   * Answers the repeats of live keys: a duplicate naming the original's tx_id when the request
   * is the same as the original's, else idempotency_key_reused naming what differs.
   */
  private async answerDuplicates<P, R, S>(
    trx: T,
    kind: PaymentKind<P, R, T, S>,
    { payments, keys }: { payments: P[]; keys: TransferKey[] },
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
      const differing = original.original && kind.differences
        ? kind.differences(payments[i]!, original.original) : []
      outcomes[i] = { ok: false, error: repeatOf(original.tx_id, differing) }
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
  private reportLocked(desk: string, accountIds: string[], committed: boolean): void {
    const write = { mode: 'locked' as const, first: true, behind: false, keys: [], locked: true }
    const accounts = [...new Set(accountIds)].sort()
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
      // A transaction settled earlier in this same batch (the same answer twice) is answered
      // as that one was: it is Pending in the read above, but settled once only.
      const first = new Map<string, R>()
      const outcomes = settlements.map((settlement): BatchOutcome<R> => {
        const txId = kind.txOf(settlement)
        const status = current.get(txId)?.status
        assert(status !== undefined, `transaction ${txId} has no row`)
        if (status !== 'Pending') return { ok: true, value: kind.settled(status, settlement) }
        if (first.has(txId)) return { ok: true, value: first.get(txId)! }
        const value = kind.settle(batch, settlement)
        first.set(txId, value)
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
async function openDebts<P, R, T extends LedgerExecutor, S>(
  trx: T,
  kind: PaymentKind<P, R, T, S>,
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
 * key in the batch claims it (a claimant); a repeat waits for its result (a duplicate). A
 * kind without keys has only claimants.
 */
function byKey<P, R, T extends LedgerExecutor, S>(
  kind: PaymentKind<P, R, T, S>,
  batch: LedgerBatch,
  payments: P[],
  keys: TransferKey[] | undefined,
  outcomes: BatchOutcome<R>[],
  rows: S,
): { claimants: number[]; duplicates: number[] } {
  const firstWithKey = new Set<string>()
  const claimants: number[] = []
  const duplicates: number[] = []
  payments.forEach((payment, i) => {
    const refusal = kind.refusal(batch, payment, rows)
    if (refusal) {
      outcomes[i] = { ok: false, error: refusal }
      return
    }
    if (!keys) {
      claimants.push(i)
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

/** The guard of a batch's write: its keys' and its own rows', both holding. */
function bothGuards(a: FlushGuard | undefined, b: FlushGuard | undefined): FlushGuard | undefined {
  if (!a || !b) return a ?? b
  const holds = a.holds && b.holds ? sql`${a.holds} and ${b.holds}` : (a.holds ?? b.holds)
  const queries = [...a.queries, ...b.queries]
  return holds ? { queries, holds } : { queries }
}

/** The accounts a payment batch marked written (ended by endWriting whatever happens). */
interface Writing {
  accounts: string[]
}

/** A payment batch as it started: its journal, its accounts and the kind's own rows. */
interface Opened<S> {
  batch: LedgerBatch
  rows: S
  accounts: string[]
  /** How many batches had started on each account when this one did (beginWriting). */
  seen: number[]
}

interface Claimants<P, S> {
  payments: P[]
  keys: TransferKey[] | undefined
  claimants: number[]
  /** The tx ids whose key was new, when the keys were claimed first. */
  claimed: Set<string> | undefined
  debts: PartnerDebts | undefined
  rows: S
}

/**
 * Records each claimant's journals in request order, against the running balances: a key
 * claimed by another is a duplicate, a payment available does not cover is refused for funds
 * (its key released), and a credit first pays its partner's debt.
 */
function takeEach<P, R, T extends LedgerExecutor, S>(
  kind: PaymentKind<P, R, T, S>,
  batch: LedgerBatch,
  { payments, keys, claimants, claimed, debts, rows }: Claimants<P, S>,
  outcomes: BatchOutcome<R>[],
  duplicates: number[],
) {
  const taking: TransferKey[] = []
  const released: TransferKey[] = []
  const taken: Array<{ payment: P; value: R }> = []
  for (const i of claimants) {
    const payment = payments[i]!
    if (claimed && !claimed.has(keys![i]!.tx_id)) {
      duplicates.push(i)
      continue
    }
    const value = kind.take(batch, payment, rows)
    if (value === undefined) {
      outcomes[i] = { ok: false, error: insufficientFunds() }
      if (keys) released.push(keys[i]!)
      continue
    }
    if (keys) taking.push(keys[i]!)
    outcomes[i] = { ok: true, value }
    taken.push({ payment, value })
    const credit = debts && kind.creditOf?.(payment)
    if (!credit) continue
    debts.recover(batch, credit.account, batch.account(credit.account).partner_id, credit.tx_id)
  }
  return { taking, released, taken }
}

/** The answer to a repeat of a live key: a duplicate, or a reuse naming what differs. */
function repeatOf(txId: string, differing: FieldIssue[]): BankError {
  if (differing.length === 0) {
    return new Duplicate(
      'duplicate transaction: this clientTxId was used within the duplicate window',
      { field: 'clientTxId', message: 'already used', tx_id: txId })
  }
  return new IdempotencyKeyReused('clientTxId',
    differing.map((d) => ({ ...d, tx_id: txId })))
}
