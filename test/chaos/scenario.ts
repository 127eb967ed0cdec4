import assert from 'node:assert/strict'
import { loadLimits, TransferLoad, type ChaosBank } from './load.ts'
import { withClient, type ServiceProcess } from './processes.ts'

// One chaos run: transfers under load, a fault while they are in flight, recovery, every
// unacknowledged transfer sent again with its own clientTxId, then the checks. The figures
// are printed as one JSON line (`chaos {...}`) before anything is asserted, so that a
// failing run still reports them.

export const chaosLimits = {
  test_timeout_ms: 120_000,
  load_requests_max: 3_000,
  load_ms: 30_000,
  retry_requests_max: 1_500,
  retry_ms: 20_000,
  /** The load goes on after recovery until this many further transfers are acknowledged. */
  acknowledged_after_recovery_min: 192,
  /** Before the fault, the load runs until this many transfers are acknowledged. */
  acknowledged_before_fault_min: 128,
}

export interface ChaosScenario {
  name: string
  bank: ChaosBank
  /** Where the SQL checks read the transactions table. */
  databaseUrl: string
  /**
   * Every service process the scenario has started so far; the last one is expected to be serving.
   */
  services(): ServiceProcess[]
  /** Breaks something while the load runs and resolves once it is repaired. */
  fault(load: TransferLoad): Promise<void>
}

export interface ChaosFigures {
  scenario: string
  requests: number
  transfers: number
  acknowledged: number
  lost: number
  doubled: number
  '5xx': number
  internal_500: number
  unavailable_503: number
  timeout_504: number
  /**
   * Retries answered 409 with the original tx_id: transfers stored although their first reply was
   * lost.
   */
  duplicate_409: number
  served_after_recovery: number
  lists_readable: boolean
  final_burst_acknowledged: number
  ledger_ok: boolean
  seconds: number
}

export async function runChaos(scenario: ChaosScenario): Promise<void> {
  const started = Date.now()
  const load = new TransferLoad(scenario.bank, chaosLimits.load_requests_max,
    started + chaosLimits.load_ms)

  // The fault strikes once the bank has served some transfers, with a full set of them in
  // flight; the load goes on through it and until enough are acknowledged after the repair.
  // A crashed service ends the run at once: it is the failure, and waiting adds nothing.
  const crashed = () => scenario.services().some((s) => s.unexpectedExit !== undefined)
  let stopAt = Infinity
  const loading = load.run(() => load.acknowledged >= stopAt || crashed())
  let acknowledgedAtRecovery = 0
  let acknowledgedBeforeFault = 0
  try {
    await load.untilAcknowledged(chaosLimits.acknowledged_before_fault_min)
    acknowledgedBeforeFault = load.acknowledged
    await scenario.fault(load)
    acknowledgedAtRecovery = load.acknowledged
    stopAt = acknowledgedAtRecovery + chaosLimits.acknowledged_after_recovery_min
  } finally {
    if (stopAt === Infinity) stopAt = 0
    await loading
  }
  const servedAfterRecovery = load.acknowledged - acknowledgedAtRecovery

  let finalBurst = 0
  if (!crashed()) {
    load.maxRequests = load.requests + chaosLimits.retry_requests_max
    load.deadline = Date.now() + chaosLimits.retry_ms
    await load.retryUnacknowledged()
    finalBurst = await load.burst()
  }

  const check = await checkTransfers(load, scenario)
  // A bank that did not recover cannot answer; the figures are printed all the same.
  const ledger = await scenario.bank.operator.ledger.verify().catch(
    (error: Error) => ({ ok: false, problems: [String(error)] }))
  const figures = summarise(scenario.name, load, { ...check, servedAfterRecovery, finalBurst,
    ledgerOk: ledger.ok, started })
  console.log('chaos', JSON.stringify(figures))
  assertRecovered(scenario, load, { acknowledgedBeforeFault, servedAfterRecovery, finalBurst })
  assertNothingLost(figures, check, ledger)
}

/** The bank went on serving: no crash, no surprise, transfers before the fault and after it. */
function assertRecovered(scenario: ChaosScenario, load: TransferLoad, counts: {
  acknowledgedBeforeFault: number; servedAfterRecovery: number; finalBurst: number }) {
  const { acknowledgedBeforeFault, servedAfterRecovery, finalBurst } = counts
  for (const [i, service] of scenario.services().entries()) {
    assert.equal(service.unexpectedExit, undefined,
      `service process ${i} exited on its own (${service.unexpectedExit})\n${service.logTail()}`)
  }
  assert.ok(scenario.services().at(-1)?.alive, 'the last service process is still running')
  assert.deepEqual(load.surprises, [], 'no reply other than 200, 409 (duplicate), 503 or 504')
  assert.ok(acknowledgedBeforeFault >= chaosLimits.acknowledged_before_fault_min,
    'the bank served transfers before the fault')
  assert.ok(servedAfterRecovery >= chaosLimits.acknowledged_after_recovery_min,
    `the bank serves again after the repair (${servedAfterRecovery} acknowledged)`)
  assert.equal(finalBurst, loadLimits.concurrency,
    'after recovery a burst of transfers is acknowledged in full')
}

/** Every acknowledged transfer is there once, nothing else is, and the ledger verifies. */
function assertNothingLost(figures: ChaosFigures,
  check: TransferCheck, ledger: { ok: boolean; problems: unknown[] }) {
  assert.equal(figures.internal_500, 0, 'no internal errors')
  assert.equal(check.unacknowledged, 0, 'every transfer sent again after recovery is acknowledged')
  assert.equal(figures.lost, 0, `no acknowledged transfer is lost: ${check.examples.join('; ')}`)
  assert.equal(figures.doubled, 0, `no transfer exists twice: ${check.examples.join('; ')}`)
  assert.equal(check.orphans, 0, 'no transfer row that the load did not ask for')
  assert.ok(check.listsReadable,
    `the transaction lists are readable after recovery: ${check.examples.join('; ')}`)
  assert.deepEqual(ledger.problems, [], 'ledger verify finds no problems')
  assert.equal(ledger.ok, true, 'ledger verify is clean')
}

interface TransferCheck {
  unacknowledged: number
  lost: number
  doubled: number
  orphans: number
  /** Whether the transaction lists could be read through the interface at the end. */
  listsReadable: boolean
  examples: string[]
}

/**
 * Every acknowledged transfer exists exactly once: in the database (one transfer row per
 * unique ref, with the acknowledged tx_id) and through the interface (once in its
 * account's transaction list).
 */
async function checkTransfers(load: TransferLoad, scenario: ChaosScenario): Promise<TransferCheck> {
  const rows = await withClient(scenario.databaseUrl, async (c) => {
    const result = await c.query<{ id: string; ref: string }>(
      `select id, ref from transactions where partner_id = $1 and tx_type = 'transfer'`,
      [scenario.bank.partnerId],
    )
    return result.rows
  })
  const idsByRef = new Map<string, string[]>()
  for (const row of rows) idsByRef.set(row.ref, [...(idsByRef.get(row.ref) ?? []), row.id])
  const check: TransferCheck = { unacknowledged: 0, lost: 0, doubled: 0, orphans: 0,
    listsReadable: true, examples: [] }
  const note = (text: string) => check.examples.length < 5 && check.examples.push(text)
  // When the interface does not answer (the service is gone), the database alone is checked
  // and the run fails on that instead.
  const listed = await listedTransferCounts(scenario.bank).catch((error: Error) => {
    check.listsReadable = false
    note(`transaction lists unreadable: ${error.message}`)
    return undefined
  })
  for (const { body, txId } of load.transfers) {
    const ids = idsByRef.get(body.ref) ?? []
    idsByRef.delete(body.ref)
    if (txId === undefined) {
      check.unacknowledged++
      continue
    }
    const timesListed = listed ? (listed.get(txId) ?? 0) : 1
    if (!ids.includes(txId) || timesListed === 0) {
      check.lost++
      note(`${body.ref}: acknowledged ${txId}, stored ${JSON.stringify(ids)}, ` +
        `listed ${timesListed} times`)
    } else if (ids.length > 1 || timesListed > 1) {
      check.doubled++
      note(`${body.ref}: stored as ${JSON.stringify(ids)}, listed ${timesListed} times`)
    }
  }
  check.orphans = idsByRef.size
  return check
}

/** How often each transfer's tx_id appears in its account's transaction list, all pages. */
async function listedTransferCounts(bank: ChaosBank): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (const account_id of bank.accounts) {
    let cursor: string | undefined
    do {
      const page = await bank.client.accounts.listTransactions(
        { account_id, limit: 1000, ...(cursor ? { cursor } : {}) })
      for (const t of page.transactions) {
        if (t.tx_type === 'transfer') counts.set(t.tx_id, (counts.get(t.tx_id) ?? 0) + 1)
      }
      cursor = page.next_cursor
    } while (cursor)
  }
  return counts
}

function summarise(
  name: string,
  load: TransferLoad,
  r: TransferCheck & {
    servedAfterRecovery: number; finalBurst: number; ledgerOk: boolean; started: number },
): ChaosFigures {
  const codes = [...load.codes.entries()]
  const count = (code: string) => load.codes.get(code) ?? 0
  const serverErrors = codes.filter(([code]) => Number(code) >= 500).reduce((sum, [, n]) => sum + n,
    0)
  return {
    scenario: name,
    requests: load.requests,
    transfers: load.transfers.length,
    acknowledged: load.acknowledged,
    lost: r.lost,
    doubled: r.doubled,
    '5xx': serverErrors,
    internal_500: serverErrors - count('503') - count('504'),
    unavailable_503: count('503'),
    timeout_504: count('504'),
    duplicate_409: count('409'),
    served_after_recovery: r.servedAfterRecovery,
    lists_readable: r.listsReadable,
    final_burst_acknowledged: r.finalBurst,
    ledger_ok: r.ledgerOk,
    seconds: Math.round((Date.now() - r.started) / 100) / 10,
  }
}

/**
 * Keeps a dependency away until the load has felt it (`failures_min` failed attempts) or,
 * against a client that just waits for it, for `outage_max_ms` at most. A real outage has
 * no injectable clock, so this is the one timed wait.
 */
export async function outage(load: TransferLoad): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    load.untilFailures(outageLimits.failures_min),
    new Promise((resolve) => (timer = setTimeout(resolve, outageLimits.outage_max_ms))),
  ])
  clearTimeout(timer)
}

export const outageLimits = {
  failures_min: 64,
  outage_max_ms: 2_000,
}
