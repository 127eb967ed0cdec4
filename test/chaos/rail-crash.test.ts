import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { TransactionStatusRow as StatusRow } from '../../src/rails/iso20022/pacs002-write.ts'
import { chaosPass } from './pass.ts'

// The ISO 20022 file rail survives the bank process being killed outright (SIGKILL) in the
// middle of its file work (issue 42, "Faults"), and refuses a 1 GB inbound file whole. The
// bank runs as a child process (`node src/main.ts`, test/chaos/processes.ts) on a database
// of its own in the shared PostgreSQL cluster and a private nats-server, with a rail folder
// (BANK_RAIL_DIR) that outlives each process, as a deployment's does. The sandbox's
// clearing-house simulator is off (BANK_RAIL_SIMULATOR=false): nothing in the bank answers
// its files, as in production. The test plays the clearing house: it reads the bank's
// pacs.008 files from outbound/ and answers them with pacs.002 files written by the bank's
// own writer (iso20022/pacs002-write.ts) into inbound/, of the sizes, outcomes and order
// each fault needs. (The simulator answers inside the bank's own cycle, at once; with it,
// no kill could be aimed at the application of one large status file, nor between two.)
// A kill's process is replaced by a new one on the same database and folder, and the
// killed cycle's lease is made to expire at once, as its minute would: the new process
// takes the cycle over, as another instance would.
//  1. Killed while one large pacs.002 (thousands of statuses) is applied: in its
//     transaction after its first write, in its ledger write, and just after its commit.
//  2. Killed while a clearing cycle writes its pacs.008 files (several: a small
//     BANK_CLEARING_CHUNK_MAX), at the creation of the n-th temporary file of a process,
//     twice. After the restarts and another cycle: each payout is in exactly one recorded
//     message; each recorded message's file is in outbound/, whole and byte for byte a
//     re-render of its record, read back by the bank's reader with its count, sum and
//     end-to-end ids; no payment is in two files, no file is there that no record names
//     (no message id used twice); temporary files left by a kill are skipped by readers,
//     and a process removes those older than an hour (rail-folder.ts), not younger ones.
//  3. Killed between status files answering the files of 2: the first applied, the next
//     waiting, twice.
//     After 1 and 3: each payout settled exactly as its status said and once (one debit,
//     one fee, the hold released once), the statuses counted right, balances and holds to
//     the cent, `ledger verify` clean.
//  4. A 1 GB status file (sparse: fs.truncate) is refused whole with a reason naming the
//     size bound, without being read into memory (the process's peak resident set stays far
//     below it), moved to archive/refused/, and changes nothing.
// The tests run one after another on one bank, in that order.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const fs = await import('node:fs')
  const path = await import('node:path')
  const { randomUUID } = await import('node:crypto')
  const pg = (await import('pg')).default
  const { setUpBank } = await import('./load.ts')
  const { ChaosNats, Cleanup, ServiceProcess, sharedClusterDatabase, tempDir, until: waitUntil } =
    await import('./processes.ts')
  const { endToEndIdOf } = await import('../../src/rails/iso20022/end-to-end-id.ts')
  const { pacs002Text } = await import('../../src/rails/iso20022/pacs002-write.ts')
  const { pacs008Chunks } = await import('../../src/rails/iso20022/pacs008-write.ts')
  const { readCreditTransfers } = await import('../../src/rails/iso20022/pacs008-read.ts')
  const { RailFolder, stale_temporary_ms } = await import('../../src/rails/rail-folder.ts')
  type ChaosBank = Awaited<ReturnType<typeof setUpBank>>
  type Service = Awaited<ReturnType<typeof ServiceProcess.start>>
  type ServiceEnv = Parameters<typeof ServiceProcess.start>[0]

  const limits = {
    test_timeout_ms: 150_000,
    /** The longest any one wait may take (a real process has no injectable clock). */
    wait_ms: 60_000,
    /** How often the database is looked at for the point a kill waits for. */
    poll_ms: 5,
    jobs_poll_ms: 100,
    senders: 32,
    /** 1: payouts sent as one message and answered by one status file. */
    applied_payouts: 3_000,
    applied_chunk_max: 10_000,
    /** 2: payouts written as files of written_chunk_max payments each. */
    written_payouts: 2_400,
    written_chunk_max: 300,
    /** A process is killed when it starts its n-th temporary file in outbound/. */
    kill_at_temporary_file: [2, 3],
    /** 3: a process is killed once this many of the status files are applied. */
    kill_after_files_applied: [1, 5],
    /** 4: the inbound file, and the most the bank's process may have held at once. */
    huge_file_bytes: 1024 ** 3,
    peak_resident_bytes_max: 768 * 1024 ** 2,
    branch_code: '999000',
  }

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  const until = <T,>(what: string, check: () => Promise<T | undefined> | T | undefined,
    pollMs: number = limits.poll_ms) => waitUntil(what, check, limits.wait_ms, pollMs)

  interface Payout {
    tx_id: string
    account_id: string
    amount: bigint
  }

  interface Rig {
    env: ServiceEnv
    services: Service[]
    bank: ChaosBank
    /** The test's own connections to the bank's database, for the checks and the kills. */
    db: InstanceType<typeof pg.Pool>
    folder: InstanceType<typeof RailFolder>
    /** Each account's balance before any payout of this file. */
    funded: Map<string, bigint>
    /** Every payout of this file: those settled, and those still pending. */
    payouts: Payout[]
    /** The payouts of the writing test, whose files the between test answers. */
    written: Payout[]
    /** The outcome each status file gave a payout (absent: not answered yet). */
    answered: Map<string, StatusRow>
  }
  let rig: Rig

  const current = () => rig.services.at(-1)!

  async function query<R extends object>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await rig.db.query<R>(text, values)).rows
  }

  // ------------------------------------------------------------ the bank and its restarts

  before(async () => {
    const nats = await ChaosNats.start(cleanup)
    const railDir = tempDir(cleanup, 'bank-chaos-rail-')
    const env: ServiceEnv = {
      natsUrl: nats.url,
      databaseUrl: await sharedClusterDatabase(cleanup),
      dataDir: tempDir(cleanup, 'bank-chaos-data-'),
      settings: {
        BANK_SANDBOX: 'true',
        BANK_RAIL_SIMULATOR: 'false',
        BANK_RAIL_DIR: railDir,
        BANK_BRANCH_CODE: limits.branch_code,
        BANK_CLEARING_CHUNK_MAX: String(limits.applied_chunk_max),
        BANK_JOBS_POLL_MS: String(limits.jobs_poll_ms),
      },
    }
    const services = [await ServiceProcess.start(env, cleanup)]
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())
    const db = new pg.Pool({ connectionString: env.databaseUrl, max: 2 })
    db.on('error', () => {})
    cleanup.add(() => db.end())
    const funded = new Map<string, bigint>()
    for (const account_id of bank.accounts) {
      const details = await bank.client.accounts.getDetails({ account_id })
      funded.set(account_id, BigInt(details.balance))
    }
    // The folders are there before the bank's first file, for the watcher of the kills.
    const folder = new RailFolder(railDir)
    await folder.ensure()
    rig = { env, services, bank, db, folder, funded, payouts: [], written: [],
      answered: new Map() }
  })

  /** A new process on the same database and folder (`settings` over the file's own). */
  async function startAgain(settings: Record<string, string> = {}): Promise<void> {
    rig.env = { ...rig.env, settings: { ...rig.env.settings, ...settings } }
    rig.services.push(await ServiceProcess.start(rig.env, cleanup))
  }

  /**
   * The job of a cycle the killed process was running is taken over by the new process at
   * once: its lease is made to expire now, as the passing of its minute would. Only that
   * job's: the new process's own jobs keep theirs.
   */
  async function expireLease(jobId: string): Promise<void> {
    await query(`update jobs set lease_expires_at = now() where id = $1 and state = 'running'`,
      [jobId])
  }

  /**
   * The processes from `first` on were each ended by its kill, a new one started after each,
   * and none exited on its own.
   */
  function assertKilled(first: number, kills: number): void {
    assert.equal(rig.services.length, first + kills + 1, 'a new process after each kill')
    for (const [i, s] of rig.services.entries()) {
      assert.equal(s.unexpectedExit, undefined, `process ${i} exited on its own\n${s.logTail()}`)
      if (i >= first && i < first + kills) {
        assert.equal(s.child.signalCode, 'SIGKILL', `process ${i} ended by the kill`)
      }
    }
  }

  /** A clearing cycle, detached: any instance runs it. Resolves with its job's id. */
  async function startCycle(): Promise<string> {
    const job = await rig.bank.operator.clearing.run({ detach: true })
    return job.job_id
  }

  /** Waits until the cycle's job is done; answers its report. */
  async function cycleDone(jobId: string): Promise<Record<string, unknown>> {
    const row = await until(`clearing job ${jobId} is done`, async () => {
      const [job] = await query<{ state: string; result: Record<string, unknown> | null;
        last_error: string | null }>('select state, result, last_error from jobs where id = $1',
      [jobId])
      return job?.state === 'done' || job?.state === 'dead' ? job : undefined
    }, 50)
    assert.equal(row.state, 'done', `the cycle ended ${row.state}: ${row.last_error}`)
    return row.result ?? {}
  }

  /** `count` EFTs from the partner's accounts, sent by `limits.senders` at once. */
  async function payOut(count: number, label: string): Promise<Payout[]> {
    const payouts: Payout[] = []
    let next = 0
    const sender = async () => {
      for (let i = next++; i < count; i = next++) {
        const account_id = rig.bank.accounts[i % rig.bank.accounts.length]!
        const amount = 100 + ((i * 37) % 900)
        const sent = await rig.bank.client.accounts.transfer({ account_id,
          clientTxId: randomUUID(), amount, ref: `${label} ${i}`, own_ref: `rail crash ${i}`,
          account_number: '62000000001', branch_code: '250655', name: `Recipient ${i}` })
        assert.equal(sent.status, 'Pending', 'an EFT waits for its clearing cycle')
        payouts.push({ tx_id: sent.tx_id, account_id, amount: BigInt(amount) })
      }
    }
    await Promise.all(Array.from({ length: limits.senders }, sender))
    rig.payouts.push(...payouts)
    return payouts
  }

  // ------------------------------------------------------------ what the database holds

  interface MessageRow {
    message_id: string
    file_name: string
    payment_type: 'EFT' | 'RTC'
    transaction_count: number
    control_sum: string
    created_at: Date
    settlement_date: string
    written_at: Date | null
  }

  interface SubmissionRow {
    tx_id: string
    message_id: string
    position: number
    end_to_end_id: string
    amount: string
    debtor_name: string
    debtor_account: string
    creditor_name: string
    creditor_account: string
    creditor_branch: string
    ref: string
    status: string | null
    reason_code: string | null
  }

  function outboundMessages(): Promise<MessageRow[]> {
    return query<MessageRow>(`select message_id, file_name, payment_type, transaction_count,
      control_sum, created_at, settlement_date, written_at from rail_messages
      where direction = 'out' order by created_at, message_id`)
  }

  function submissionsOf(txIds: readonly string[]): Promise<SubmissionRow[]> {
    return query<SubmissionRow>(`select * from rail_submissions where tx_id = any($1::uuid[])
      order by message_id, position`, [txIds])
  }

  /** The files of a folder: the message files, and the temporary (dot) ones. */
  function filesIn(dir: string): { messages: string[]; temporary: string[] } {
    const names = fs.readdirSync(dir).filter((name) => fs.statSync(path.join(dir, name)).isFile())
    return { messages: names.filter((n) => !n.startsWith('.')).sort(),
      temporary: names.filter((n) => n.startsWith('.')).sort() }
  }

  // ------------------------------------------------------------ the clearing house's answers

  /** The clearing house's outcome of payout i: mostly accepted, some rejected (AC01, AG01). */
  function statusOf(txId: string, i: number): StatusRow {
    const original_end_to_end_id = endToEndIdOf(txId)
    if (i % 10 === 3) return { original_end_to_end_id, status: 'RJCT', reason_code: 'AC01' }
    if (i % 10 === 7) return { original_end_to_end_id, status: 'RJCT', reason_code: 'AG01' }
    return { original_end_to_end_id, status: 'ACSC' }
  }

  interface Delivered {
    name: string
    report_id: string
  }

  /**
   * A status report answering the payouts of one message of the bank's, written by the
   * bank's own writer into inbound/ as a transport delivers a file: under a dot name, then
   * renamed. `arrived` is its time (the bank applies a kind's files in the order they came).
   */
  async function deliverStatuses(messageId: string, payouts: Payout[],
      arrived: Date): Promise<Delivered> {
    const report_id = `CHS${randomUUID().replaceAll('-', '')}`
    const rows = payouts.map((p, i) => statusOf(p.tx_id, i))
    const text = await pacs002Text({ message_id: report_id, created_at: arrived,
      original_message_id: messageId }, rows)
    const name = `pacs.002.${report_id}.xml`
    const temporary = path.join(rig.folder.inbound, `.${name}`)
    fs.writeFileSync(temporary, text)
    fs.utimesSync(temporary, arrived, arrived)
    fs.renameSync(temporary, path.join(rig.folder.inbound, name))
    for (const [i, p] of payouts.entries()) rig.answered.set(p.tx_id, rows[i]!)
    return { name, report_id }
  }

  /** The messages that carry the payouts, in the order they were made, each with its own. */
  async function messagesOf(payouts: Payout[]): Promise<Array<[string, Payout[]]>> {
    const byTx = new Map(payouts.map((p) => [p.tx_id, p]))
    const grouped = new Map<string, Payout[]>()
    for (const s of await submissionsOf(payouts.map((p) => p.tx_id))) {
      grouped.set(s.message_id, [...(grouped.get(s.message_id) ?? []), byTx.get(s.tx_id)!])
    }
    const order = (await outboundMessages()).map((m) => m.message_id)
    return [...grouped.entries()].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
  }

  // ------------------------------------------------------------ settled once, to the cent

  const outcome = { ACSC: 'Successful', AC01: 'Invalid', AG01: 'Failed' } as const
  const expectedStatus = (answer: StatusRow | undefined) => answer === undefined ? 'Pending'
    : outcome[(answer.reason_code ?? answer.status) as keyof typeof outcome]

  interface PayoutState {
    id: string
    account_id: string
    status: string
    amount: string
    fee: string
    postings: number
    fees_paid: number
    fee_postings: number
    rail_status: string | null
    reason_code: string | null
  }

  /** The payouts' rows, their postings, their fees' and the rail's record of their answers. */
  function payoutStates(txIds: readonly string[]): Promise<PayoutState[]> {
    return query<PayoutState>(`
      with counted as (select tx_id, count(*)::int as n from postings
        where tx_id is not null group by tx_id),
      fees as (select f.parent_tx_id as id,
          (count(*) filter (where f.status = 'Successful'))::int as paid,
          coalesce(sum(c.n), 0)::int as postings
        from transactions f left join counted c on c.tx_id = f.id
        where f.parent_tx_id = any($1::uuid[]) and f.tx_type = 'fee' group by f.parent_tx_id)
      select t.id, t.account_id, t.status, t.amount, t.fee, coalesce(c.n, 0) as postings,
        coalesce(fees.paid, 0) as fees_paid, coalesce(fees.postings, 0) as fee_postings,
        s.status as rail_status, s.reason_code
      from transactions t left join counted c on c.tx_id = t.id
        left join fees on fees.id = t.id left join rail_submissions s on s.tx_id = t.id
      where t.id = any($1::uuid[])`, [txIds])
  }

  /**
   * Each payout as its status said, once: Successful with one debit (two postings) and one
   * fee paid (two postings), or Failed/Invalid with no posting and no fee; the rail's record
   * of its answer the file's. Answers the problems and the statuses counted.
   */
  async function settlementProblems(payouts: Payout[]) {
    const problems: string[] = []
    const counted: Record<string, number> = {}
    const states = await payoutStates(payouts.map((p) => p.tx_id))
    if (states.length !== payouts.length) problems.push(`${states.length} of the payouts found`)
    for (const state of states) {
      const answer = rig.answered.get(state.id)
      const status = expectedStatus(answer)
      counted[state.status] = (counted[state.status] ?? 0) + 1
      const paid = status === 'Successful'
      const fee = BigInt(state.fee) > 0n ? 1 : 0
      const wanted = { status, postings: paid ? 2 : 0, fees_paid: paid ? fee : 0,
        fee_postings: paid ? 2 * fee : 0, rail_status: answer?.status ?? null,
        reason_code: answer?.reason_code ?? null }
      const got = { status: state.status, postings: state.postings, fees_paid: state.fees_paid,
        fee_postings: state.fee_postings, rail_status: state.rail_status,
        reason_code: state.reason_code }
      if (JSON.stringify(got) !== JSON.stringify(wanted)) {
        problems.push(`${state.id}: ${JSON.stringify(got)}, wanted ${JSON.stringify(wanted)}`)
      }
    }
    return { problems, counted }
  }

  /**
   * Every account's balance is its funding less its payouts paid and their fees, and what it
   * holds is the payouts still Pending with their fees: each hold released once.
   */
  async function balanceProblems(): Promise<string[]> {
    const states = new Map((await payoutStates(rig.payouts.map((p) => p.tx_id)))
      .map((s) => [s.id, s]))
    const problems: string[] = []
    for (const [account_id, funding] of rig.funded) {
      let spent = 0n
      let held = 0n
      for (const p of rig.payouts.filter((payout) => payout.account_id === account_id)) {
        const state = states.get(p.tx_id)!
        const cost = BigInt(state.amount) + BigInt(state.fee)
        if (state.status === 'Successful') spent += cost
        if (state.status === 'Pending') held += cost
      }
      const details = await rig.bank.client.accounts.getDetails({ account_id })
      const got = { balance: details.balance, available: details.available_balance }
      const wanted = { balance: String(funding - spent), available: String(funding - spent - held) }
      if (JSON.stringify(got) !== JSON.stringify(wanted)) {
        problems.push(`${account_id}: ${JSON.stringify(got)}, wanted ${JSON.stringify(wanted)}`)
      }
    }
    return problems
  }

  const tally = (payouts: Payout[]) => {
    const counts: Record<string, number> = {}
    for (const p of payouts) {
      const status = expectedStatus(rig.answered.get(p.tx_id))
      counts[status] = (counts[status] ?? 0) + 1
    }
    return counts
  }

  /** The checks of a scenario that applied status files: settled once, to the cent, clean. */
  async function assertSettledOnce(payouts: Payout[]) {
    const settled = await settlementProblems(payouts)
    const balances = await balanceProblems()
    const ledger = await rig.bank.operator.ledger.verify({})
    for (const [i, s] of rig.services.entries()) {
      assert.equal(s.unexpectedExit, undefined, `process ${i} exited on its own\n${s.logTail()}`)
    }
    assert.deepEqual(settled.problems.slice(0, 10), [], 'each payout settled as said, once')
    assert.deepEqual(settled.counted, tally(payouts), 'the statuses counted as the files said')
    assert.deepEqual(balances, [], 'balances and holds to the cent')
    assert.deepEqual(ledger.problems, [])
    assert.equal(ledger.ok, true, 'ledger verify is clean')
    return { counted: settled.counted, ledger_ok: ledger.ok }
  }

  // ------------------------------------------------------------ 1. killed applying a file

  type ApplyStage = 'first write' | 'ledger write' | 'commit'

  interface ApplyKill {
    stage: ApplyStage
    /** The file's message recorded applied (its transaction committed) at the kill. */
    recorded: boolean
    in_inbound: boolean
    archived: boolean
  }

  /**
   * Where the bank's application of report `$1` is: a transaction holding a write lock on
   * rail_messages is applying it (its first write records the message), one that holds
   * postings too is in its ledger write; `recorded` once it has committed.
   */
  const applying_sql = `
    with locks as (
      select l.pid, c.relname from pg_locks l join pg_class c on c.oid = l.relation
      where l.granted and l.mode = 'RowExclusiveLock' and l.pid <> pg_backend_pid()
        and l.database = (select oid from pg_database where datname = current_database())
        and c.relname in ('rail_messages', 'postings'))
    select
      exists (select 1 from locks where relname = 'rail_messages') as applying,
      exists (select 1 from locks m join locks p on p.pid = m.pid
        where m.relname = 'rail_messages' and p.relname = 'postings') as booking,
      exists (select 1 from rail_messages where direction = 'in' and message_id = $1) as recorded`

  /** Kills the current process once the report's application reaches `stage`. */
  async function killWhenApplying(stage: ApplyStage, file: Delivered): Promise<ApplyKill> {
    await until(`the application of ${file.name} reaches its ${stage}`, async () => {
      const [at] = await query<{ applying: boolean; booking: boolean; recorded: boolean }>(
        applying_sql, [file.report_id])
      const reached = stage === 'first write' ? at!.applying
        : stage === 'ledger write' ? at!.booking : at!.recorded
      return reached || undefined
    })
    await current().kill()
    const [row] = await query('select 1 from rail_messages where direction = $1 and ' +
      'message_id = $2', ['in', file.report_id])
    return { stage, recorded: row !== undefined,
      in_inbound: fs.existsSync(path.join(rig.folder.inbound, file.name)),
      archived: fs.existsSync(path.join(rig.folder.archive, file.name)) }
  }

  test('rail crash - SIGKILL while a pacs.002 of thousands of statuses is applied (in its transaction, in its ledger write, just after its commit): every payment settled exactly once, statuses counted right, ledger verify clean', { timeout: limits.test_timeout_ms }, async () => {
    const started = Date.now()
    const first = rig.services.length - 1
    const payouts = await payOut(limits.applied_payouts, 'applied')
    // One message for all of them (the first process makes files of up to applied_chunk_max;
    // the next ones, and the next test, of written_chunk_max).
    await rig.bank.operator.clearing.run()
    const messages = await messagesOf(payouts)
    assert.equal(messages.length, 1, 'the payouts went out as one message')
    const file = await deliverStatuses(messages[0]![0], messages[0]![1], new Date())
    const kills: ApplyKill[] = []
    let jobId: string | undefined
    for (const stage of ['first write', 'ledger write', 'commit'] as const) {
      if (jobId === undefined) jobId = await startCycle()
      else await expireLease(jobId)
      kills.push(await killWhenApplying(stage, file))
      await startAgain({ BANK_CLEARING_CHUNK_MAX: String(limits.written_chunk_max) })
    }
    await expireLease(jobId!)
    const resumed = await cycleDone(jobId!)
    const settled = await assertSettledOnce(payouts)
    console.log('chaos', JSON.stringify({ scenario: 'rail SIGKILL while applying a pacs.002',
      statuses: payouts.length, kills, resumed_report: resumed, ...settled,
      seconds: Math.round((Date.now() - started) / 100) / 10 }))

    assertKilled(first, kills.length)
    for (const kill of kills.slice(0, 2)) {
      assert.equal(kill.recorded, false, `the kill at its ${kill.stage} landed before the commit`)
      assert.equal(kill.in_inbound, true, 'the file waits in inbound/ for the next process')
    }
    assert.equal(kills[2]!.recorded, true, 'the last kill landed after the commit')
    assert.equal(resumed.resumed, true, 'the killed cycle was taken over and finished')
    assert.ok(fs.existsSync(path.join(rig.folder.archive, file.name)), 'the file is archived')
    assert.deepEqual(filesIn(rig.folder.inbound).messages, [], 'nothing left in inbound/')
  })

  // ------------------------------------------------------------ 2. killed writing files

  interface WriteKill {
    temporary: string
    /** The file being written was left as it was: its temporary file is still there. */
    mid_write: boolean
    recorded: number
    written: number
    files: number
    temporary_left: number
  }

  /**
   * Kills the current process when it creates its n-th temporary file in outbound/ (a file
   * being written), from the watcher's callback, so the signal goes while that file is
   * open; answers where it landed.
   */
  function killAtTemporaryFile(n: number): Promise<WriteKill> {
    return new Promise((resolve, reject) => {
      const seen = new Set<string>()
      const watcher = fs.watch(rig.folder.outbound, (_, name) => {
        if (!name?.startsWith('.') || seen.has(name)) return
        seen.add(name)
        if (seen.size < n) return
        watcher.close()
        current().kill().then(async () => {
          const messages = await outboundMessages()
          const files = filesIn(rig.folder.outbound)
          resolve({ temporary: name,
            mid_write: fs.existsSync(path.join(rig.folder.outbound, name)),
            recorded: messages.length,
            written: messages.filter((m) => m.written_at !== null).length,
            files: files.messages.length, temporary_left: files.temporary.length })
        }, reject)
      })
    })
  }

  /** Makes the temporary files in outbound/ look left there longer than stale_temporary_ms. */
  function ageTemporaries(): void {
    const long_ago = new Date(Date.now() - stale_temporary_ms - 60_000)
    for (const name of filesIn(rig.folder.outbound).temporary) {
      fs.utimesSync(path.join(rig.folder.outbound, name), long_ago, long_ago)
    }
  }

  /** The message's file as the bank writes it from its record (iso-rail.ts writeOutbound). */
  async function rerender(message: MessageRow, rows: SubmissionRow[]): Promise<string> {
    const header = { message_id: message.message_id, created_at: message.created_at,
      payment_type: message.payment_type, number_of_transactions: message.transaction_count,
      control_sum: BigInt(message.control_sum), settlement_date: message.settlement_date }
    const transfers = rows.map((s) => ({ tx_id: s.tx_id, amount: BigInt(s.amount), ref: s.ref,
      debtor: { name: s.debtor_name, account_number: s.debtor_account,
        branch_code: limits.branch_code },
      creditor: { name: s.creditor_name, account_number: s.creditor_account,
        branch_code: s.creditor_branch } }))
    let text = ''
    for await (const chunk of pacs008Chunks(header, transfers)) text += chunk
    return text
  }

  /** What is wrong with the outbound files of the payouts' messages (nothing, it is hoped). */
  async function outboundProblems(payouts: Payout[]) {
    const problems: string[] = []
    const submissions = await submissionsOf(payouts.map((p) => p.tx_id))
    const sent = new Set(submissions.map((s) => s.tx_id))
    const unsent = payouts.filter((p) => !sent.has(p.tx_id))
    if (unsent.length > 0) problems.push(`${unsent.length} payouts in no recorded message`)
    const ids = new Set(submissions.map((s) => s.message_id))
    const messages = (await outboundMessages()).filter((m) => ids.has(m.message_id))
    const inFiles = new Map<string, string>()
    for (const message of messages) {
      const rows = submissions.filter((s) => s.message_id === message.message_id)
      problems.push(...await fileProblems(message, rows, inFiles))
    }
    const files = filesIn(rig.folder.outbound)
    const recorded = new Set((await outboundMessages()).map((m) => m.file_name))
    const strays = files.messages.filter((name) => !recorded.has(name))
    if (strays.length > 0) problems.push(`files no record names: ${strays.join(', ')}`)
    return { problems, messages: messages.length, files: files.messages.length,
      temporary: files.temporary.length, payments_in_files: inFiles.size,
      listed: (await rig.folder.list(rig.folder.outbound)).length }
  }

  /**
   * One message's file against its record: written, byte for byte its re-render, read back
   * by the bank's reader with the record's id, count, sum and end-to-end ids, in order; no
   * end-to-end id in two files (`inFiles`, across the calls).
   */
  async function fileProblems(message: MessageRow, rows: SubmissionRow[],
      inFiles: Map<string, string>): Promise<string[]> {
    const name = message.file_name
    const file = path.join(rig.folder.outbound, name)
    if (message.written_at === null) return [`${name}: not marked written`]
    if (!fs.existsSync(file)) return [`${name}: not in outbound/`]
    const problems: string[] = []
    if (fs.readFileSync(file, 'utf8') !== await rerender(message, rows)) {
      problems.push(`${name}: not byte for byte the re-render of its record`)
    }
    const read = await readCreditTransfers({ file })
    const header = read.header
    if (header.message_id !== message.message_id || header.transaction_count !== rows.length
      || header.control_sum !== BigInt(message.control_sum)
      || message.transaction_count !== rows.length) {
      problems.push(`${name}: header ${JSON.stringify({ ...header, control_sum:
        String(header.control_sum) })} against its record`)
    }
    const ends = read.items.map((item) => item.end_to_end_id)
    if (ends.join() !== rows.map((s) => s.end_to_end_id).join()) {
      problems.push(`${name}: its payments are not its record's, in order`)
    }
    for (const end of ends) {
      const other = inFiles.get(end)
      if (other !== undefined) problems.push(`${end} is in ${other} and ${name}`)
      inFiles.set(end, name)
    }
    return problems
  }

  test('rail crash - SIGKILL while a clearing cycle writes its pacs.008 files, twice: after the restarts and another cycle each payout is in one recorded message, each file whole and byte for byte its record, no payment in two files, no id used twice', { timeout: limits.test_timeout_ms }, async () => {
    const started = Date.now()
    const first = rig.services.length - 1
    const payouts = await payOut(limits.written_payouts, 'written')
    rig.written = payouts
    const kills: WriteKill[] = []
    let jobId: string | undefined
    for (const [i, n] of limits.kill_at_temporary_file.entries()) {
      const killed = killAtTemporaryFile(n)
      if (jobId === undefined) jobId = await startCycle()
      else await expireLease(jobId)
      kills.push(await killed)
      // The first kill's temporary file is made older than stale_temporary_ms, as if left
      // long ago: the next process removes it. The second's is young, and kept.
      if (i === 0) ageTemporaries()
      await startAgain()
    }
    await expireLease(jobId!)
    const resumed = await cycleDone(jobId!)
    const messagesBefore = (await outboundMessages()).length
    const another = await rig.bank.operator.clearing.run()
    const check = await outboundProblems(payouts)
    console.log('chaos', JSON.stringify({ scenario: 'rail SIGKILL while writing pacs.008 files',
      payouts: payouts.length, chunk_max: limits.written_chunk_max, kills,
      messages: check.messages, files: check.files, temporary_files_left: check.temporary,
      payments_in_files: check.payments_in_files, problems: check.problems.length,
      seconds: Math.round((Date.now() - started) / 100) / 10 }))

    assertKilled(first, kills.length)
    for (const [i, kill] of kills.entries()) {
      assert.ok(kill.recorded < Math.ceil(payouts.length / limits.written_chunk_max),
        `kill ${i} landed while messages were still to be made (${kill.recorded} recorded)`)
    }
    assert.ok(kills.some((kill) => kill.mid_write && kill.written < kill.recorded),
      'a kill landed in the middle of a file: its temporary file left, its message not written')
    assert.equal(resumed.resumed, true, 'the killed cycle was taken over and finished')
    assert.equal((await outboundMessages()).length, messagesBefore,
      'another cycle sends nothing again')
    assert.deepEqual([another.settled, another.failed, another.invalid], [0, 0, 0])
    assert.deepEqual(check.problems.slice(0, 10), [], 'every file whole and its record\'s')
    assert.equal(check.messages, Math.ceil(payouts.length / limits.written_chunk_max),
      'one message per chunk: none made twice')
    assert.equal(check.payments_in_files, payouts.length, 'every payout in exactly one file')
    assert.equal(check.listed, check.files, 'temporary files are not read as messages')
    const left = new Set(filesIn(rig.folder.outbound).temporary)
    if (kills[0]!.mid_write) {
      assert.equal(left.has(kills[0]!.temporary), false, 'a stale temporary file is removed')
    }
    if (kills[1]!.mid_write) {
      assert.equal(left.has(kills[1]!.temporary), true, 'a young one may be a write going on')
    }
  })

  // ------------------------------------------------------------ 3. killed between two files

  interface BetweenKill {
    /** Of the status files, those recorded applied at the kill, and those waiting in inbound/. */
    applied: number
    waiting: number
  }

  /** Kills the current process once `count` of the reports are recorded applied. */
  async function killAfterApplied(count: number, files: Delivered[]): Promise<BetweenKill> {
    const ids = files.map((f) => f.report_id)
    const applied = async () => (await query<{ n: number }>(`select count(*)::int as n
      from rail_messages where direction = 'in' and message_id = any($1)`, [ids]))[0]!.n
    await until(`${count} status files are applied`, async () =>
      (await applied()) >= count || undefined)
    await current().kill()
    const inbound = new Set(filesIn(rig.folder.inbound).messages)
    return { applied: await applied(), waiting: files.filter((f) => inbound.has(f.name)).length }
  }

  test('rail crash - SIGKILL between two status files (the first applied, the next waiting), twice: every payment settled exactly once, statuses counted right, ledger verify clean', { timeout: limits.test_timeout_ms }, async () => {
    const started = Date.now()
    const first = rig.services.length - 1
    // The payouts of the first test, sent in files of written_chunk_max: one report each, in
    // the order they arrive (a second apart).
    const payouts = rig.written
    const messages = await messagesOf(payouts)
    assert.equal(messages.length, Math.ceil(payouts.length / limits.written_chunk_max))
    const arrivedFrom = Date.now() - 60_000
    const files: Delivered[] = []
    for (const [i, [messageId, carried]] of messages.entries()) {
      files.push(await deliverStatuses(messageId, carried, new Date(arrivedFrom + i * 1000)))
    }
    const kills: BetweenKill[] = []
    let jobId: string | undefined
    for (const count of limits.kill_after_files_applied) {
      if (jobId === undefined) jobId = await startCycle()
      else await expireLease(jobId)
      kills.push(await killAfterApplied(count, files))
      await startAgain()
    }
    await expireLease(jobId!)
    const resumed = await cycleDone(jobId!)
    const settled = await assertSettledOnce(rig.payouts)
    console.log('chaos', JSON.stringify({ scenario: 'rail SIGKILL between status files',
      files: files.length, statuses: payouts.length, kills, resumed_report: resumed, ...settled,
      seconds: Math.round((Date.now() - started) / 100) / 10 }))

    assertKilled(first, kills.length)
    for (const [i, kill] of kills.entries()) {
      const count = limits.kill_after_files_applied[i]!
      assert.ok(kill.applied >= count && kill.applied < files.length,
        `kill ${i}: ${kill.applied} files applied, others waiting`)
      assert.ok(kill.waiting >= files.length - kill.applied, 'the rest wait in inbound/')
    }
    assert.ok(kills.some((kill, i) => kill.applied === limits.kill_after_files_applied[i]),
      'a kill landed between two files: one just applied, the next not')
    assert.equal(resumed.resumed, true, 'the killed cycle was taken over and finished')
    assert.deepEqual(filesIn(rig.folder.inbound).messages, [], 'nothing left in inbound/')
    for (const file of files) {
      assert.ok(fs.existsSync(path.join(rig.folder.archive, file.name)), `${file.name} archived`)
    }
  })

  // ------------------------------------------------------------ 4. a 1 GB inbound file

  /** What an inbound file must not change: the rail's records, the ledger, the accounts. */
  async function state() {
    const [row] = await query(`select
      (select md5(string_agg(direction || message_id || coalesce(written_at::text, '') ||
        coalesce(sha256, ''), ',' order by direction, message_id)) from rail_messages) as messages,
      (select md5(string_agg(tx_id::text || coalesce(status, '') || coalesce(reason_code, ''),
        ',' order by tx_id)) from rail_submissions) as submissions,
      (select md5(string_agg(id::text || status || amount::text, ',' order by id))
        from transactions) as transactions,
      (select count(*)::text || ':' || sum(amount)::text from postings) as postings,
      (select md5(string_agg(id::text || balance::text || held::text, ',' order by id))
        from accounts) as accounts`)
    return row
  }

  /** The process's peak resident set (VmHWM, Linux), in bytes. */
  function peakResident(service: Service): number {
    const status = fs.readFileSync(`/proc/${service.child.pid}/status`, 'utf8')
    const kilobytes = /^VmHWM:\s+(\d+) kB$/m.exec(status)
    assert.ok(kilobytes, 'the process\'s status names its peak resident set')
    return Number(kilobytes[1]) * 1024
  }

  /**
   * A status report's first bytes (a genuine header, so only its size is wrong), then zeros
   * up to `bytes`: a sparse file, made in no time, delivered under a dot name and renamed.
   */
  function deliverHuge(name: string, bytes: number): void {
    const temporary = path.join(rig.folder.inbound, `.${name}`)
    fs.writeFileSync(temporary, '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns=' +
      '"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.11"><FIToFIPmtStsRpt><GrpHdr>' +
      '<MsgId>CHHUGE</MsgId>')
    fs.truncateSync(temporary, bytes)
    fs.renameSync(temporary, path.join(rig.folder.inbound, name))
  }

  test('rail crash - a 1 GB inbound status file is refused whole with a reason naming the size bound, is not read into memory, is set aside in archive/refused/ and changes nothing', { timeout: limits.test_timeout_ms }, async () => {
    const name = 'pacs.002.CHHUGE.xml'
    const before = await state()
    const residentBefore = peakResident(current())
    deliverHuge(name, limits.huge_file_bytes)
    const report = await rig.bank.operator.clearing.run()
    const residentAfter = peakResident(current())
    const refusals = await query<{ file_name: string; reason: string }>(
      'select file_name, reason from rail_refusals where file_name = $1', [name])
    const refused = path.join(rig.folder.refused, name)
    console.log('chaos', JSON.stringify({ scenario: 'rail 1 GB inbound file',
      bytes: limits.huge_file_bytes, refusals, peak_resident_before: residentBefore,
      peak_resident_after: residentAfter }))

    assert.deepEqual([report.settled, report.failed, report.invalid, report.returned],
      [0, 0, 0, 0])
    assert.equal(refusals.length, 1, 'one refusal recorded')
    assert.match(refusals[0]!.reason,
      /^pacs\.002\.001\.11 refused: the message is larger than 268435456 bytes$/)
    assert.ok(current().logTail().includes('"msg":"rail: inbound file refused"'),
      'the refusal is logged for the operators')
    assert.ok(current().logTail().includes('larger than 268435456 bytes'), 'with its reason')
    assert.equal(fs.statSync(refused).size, limits.huge_file_bytes, 'set aside whole')
    assert.deepEqual(filesIn(rig.folder.inbound).messages, [], 'nothing left in inbound/')
    assert.equal(fs.existsSync(path.join(rig.folder.archive, name)), false, 'not applied')
    assert.deepEqual(await state(), before, 'nothing changed')
    assert.ok(residentAfter < limits.peak_resident_bytes_max,
      `the bank never held the file: peak resident set ${residentAfter} bytes`)
    assert.equal(current().unexpectedExit, undefined)
  })
}
