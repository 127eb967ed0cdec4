import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from '../chaos/pass.ts'

// The CLI no longer waits on a dead instance (issue 28). `bank clearing run` and `bank
// sandbox advance` get their job at once and follow it by polling; here the bank process
// running the job is killed outright (SIGKILL) in the middle of it:
//  1. two instances: the one running a clearing cycle of 400 EFTs is killed; the other takes
//     the cycle over and the CLI, still following, prints the report and exits 0; every
//     EFT is settled once and the ledger verifies.
//  2. one instance, 30 days of sandbox time (its clearing cycles and debit runs): it is
//     killed in the middle of the advance, so for a while no instance answers the CLI's
//     polls at all; a restarted process takes the advance over, runs it to the same target,
//     and the CLI prints where the clock stands.
// A killed process keeps its jobs leased for their lease (60 s of wall-clock time), which
// is how the other instances learn that it is gone; the tests make that lease lapse at once
// (as the passing minute would) instead of waiting it out. The CLI runs in this process
// (src/cli/main.ts runCli, as bin/bank.js runs it), its stderr watched as it is written.
// PostgreSQL pass only, like the other chaos tests.

if (chaosPass) {
  const { randomUUID } = await import('node:crypto')
  const { runCli } = await import('../../src/cli/main.ts')
  const { setUpBank } = await import('../chaos/load.ts')
  const { ChaosNats, Cleanup, ServiceProcess, sharedClusterDatabase, tempDir, until: waitUntil,
    withClient } = await import('../chaos/processes.ts')
  type Service = Awaited<ReturnType<typeof ServiceProcess.start>>

  const limits = {
    test_timeout_ms: 200_000,
    /** The longest one wait of a scenario may take (a real process has no injectable clock). */
    wait_ms: 60_000,
    poll_interval_ms: 25,
    efts: 400,
    eft_senders: 16,
  }
  const cleanup = new Cleanup()
  after(() => cleanup.run())
  const until =
    <T,>(what: string, check: () => Promise<T | undefined> | T | undefined) => waitUntil(what,
    check, limits.wait_ms, limits.poll_interval_ms)

  /**
   * `bank <args>` in this process against the bank of `dataDir`: its exit code, stdout, and stderr
   * as it is written.
   */
  function cli(args: string[], natsUrl: string, dataDir: string) {
    let stdout = ''
    let stderr = ''
    const env: NodeJS.ProcessEnv = { ...process.env, NATS_URL: natsUrl, BANK_DATA_DIR: dataDir }
    delete env.BANK_OPERATOR_TOKEN
    const code = runCli(args, env, { stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text) })
    return { code, stdout: () => stdout, stderr: () => stderr }
  }

  async function startBank(settings: Record<string, string>, instances: number) {
    const nats = await ChaosNats.start(cleanup)
    const env = {
      natsUrl: nats.url,
      databaseUrl: await sharedClusterDatabase(cleanup),
      dataDir: tempDir(cleanup, 'bank-chaos-follow-'),
      settings: { BANK_JOBS_POLL_MS: '100', ...settings },
    }
    const services: Service[] = []
    for (let i = 0; i < instances; i++) services.push(await ServiceProcess.start(env, cleanup))
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())
    const sql = <R extends Record<string, unknown>>(text: string, values: unknown[] = []) =>
      withClient(env.databaseUrl, async (c) => (await c.query<R>(text, values)).rows)
    const job = async (id: string) => (await sql<{ state: string; attempts: number; lease_owner: string | null }>(`select state, attempts, lease_owner from jobs where id = $1`, [id]))[0]
    return { env, services, bank, sql, job }
  }

  /** The service whose process runs under the job's lease owner (`host:pid:…`). */
  function ownerOf(services: Service[], owner: string): Service {
    const pid = Number(owner.split(':').at(-2))
    const service = services.find((s) => s.child.pid === pid)
    assert.ok(service, `no service of this test has pid ${pid} (lease owner ${owner})`)
    return service
  }

  /** `limits.efts` EFTs from the bank's accounts, a few senders at once. */
  async function sendEfts(bank: Awaited<ReturnType<typeof startBank>>['bank']) {
    let next = 0
    // A few senders at once, each sending its next EFT when the last is answered.
    const send = async () => {
      for (let n = next++; n < limits.efts; n = next++) {
        await bank.client.accounts.transfer({
          account_id: bank.accounts[n % bank.accounts.length]!, clientTxId: randomUUID(),
          amount: 1_000 + n, ref: `follow ${n}`,
          own_ref: `follow chaos ${n}`, account_number: '62000000001', branch_code: '250655',
          name: 'Follow Recipient',
        })
      }
    }
    await Promise.all(Array.from({ length: limits.eft_senders }, send))
  }

  test('cli follow chaos - the instance running bank clearing run is killed; another finishes the cycle and the CLI prints its report', { timeout: limits.test_timeout_ms }, async () => {
    // One EFT per clearing transaction, so that 400 of them take a while to settle.
    const { env, services, bank, sql, job } = await startBank({ BANK_CLEARING_CHUNK_MAX: '1' }, 2)
    await sendEfts(bank)
    const settled = async () => Number((await sql<{ n: string }>(`select count(*)::text as n from transactions where tx_type = 'transfer' and tx_payment_type = 'EFT' and status = 'Successful'`))[0]!.n)

    const run = cli(['clearing', 'run'], env.natsUrl, env.dataDir)
    const jobId = await until('the CLI follows a job', async () => /^clearing\.cycle job ([0-9a-f-]{36}) queued/.exec(run.stderr())?.[1])
    // Killed once the CLI has shown the job running (a poll of the CLI's may go unanswered on
    // a loaded machine while the instance is busy: the kill waits for the line, not a moment).
    const owner = await until('some EFTs are settled and the CLI shows the job running',
        async () => {
      const row = await job(jobId)
      if (row?.state !== 'running' || !row.lease_owner || (await settled()) === 0) return undefined
      return run.stderr().includes(`: running on ${row.lease_owner} (attempt 1 of 10)\n`)
        ? row.lease_owner : undefined
    })
    const killed = ownerOf(services, owner)
    await killed.kill()
    const atKill = await settled()
    assert.equal((await job(jobId))?.state, 'running', 'killed in the middle of the cycle')
    assert.ok(atKill < limits.efts,
      `killed in the middle of the cycle (${atKill} of ${limits.efts} settled)`)
    await sql(`update jobs set lease_expires_at = now() where id = $1 and state = 'running'`, [jobId])

    assert.equal(await run.code, 0, run.stderr())
    const report = JSON.parse(run.stdout())
    console.log('chaos', JSON.stringify({ scenario: 'clearing run, its instance SIGKILL',
      efts: limits.efts, settled_before_kill: atKill, report }))
    assert.equal(report.resumed, true)
    assert.equal(report.settled, limits.efts - atKill,
      `the survivor settled the rest (${report.settled}; ${atKill} before the kill)`)
    const survivor = services.find((s) => s !== killed)!
    const lines = run.stderr()
    assert.match(lines,
      new RegExp(`: running on ${owner.replaceAll('.', '\\.')} \\(attempt 1 of 10\\)\\n`))
    assert.match(lines, /: done on attempt 2 of 10\n$/)

    assert.equal(await settled(), limits.efts, 'every EFT settled')
    const [counts] = await sql<{ settles: string; distinct_txs: string }>(
      `select count(*)::text as settles, count(distinct id)::text as distinct_txs from transactions where tx_payment_type = 'EFT' and tx_type = 'transfer'`,
    )
    assert.equal(counts?.settles, counts?.distinct_txs)
    const ledger = await bank.operator.ledger.verify({})
    assert.deepEqual(ledger.problems, [])
    assert.equal(survivor.unexpectedExit, undefined)
  })

  test('cli follow chaos - the only instance is killed in the middle of bank sandbox advance; a restarted one finishes it and the CLI prints it', { timeout: limits.test_timeout_ms }, async () => {
    // Clearing cycles on every business day of the year, and the debit runs: work for the advance
    // to walk.
    const { env, services, sql, job } = await startBank({ BANK_CLEARING_SCHEDULE: 'on' }, 1)
    const cycles = async () => Number((await sql<{ n: string }>(`select count(*)::text as n from jobs where kind = 'clearing.cycle' and state = 'done'`))[0]!.n)

    const run = cli(['sandbox', 'advance', '30d'], env.natsUrl, env.dataDir)
    const jobId = await until('the CLI follows a job', async () => /^sandbox\.advance job ([0-9a-f-]{36}) queued/.exec(run.stderr())?.[1])
    await until('the advance has run some clearing cycles', async () => ((await cycles()) >= 5
      ? true : undefined))
    await services[0]!.kill()
    assert.equal((await job(jobId))?.state, 'running', 'killed in the middle of the advance')
    const [{ target }] = (await sql<{ target: string }>(`select payload->>'target' as target from jobs where id = $1`, [jobId])) as [{ target: string }]
    // No instance answers now; the CLI keeps asking. (Its first request after the kill may
    // have gone to the dying instance and time out; those after it find no instance at all.)
    const nobody = /no answer from the bank \((no bank instance is answering|the bank did not answer in time)/
    await until('the CLI says nobody answers', async () => (nobody.test(run.stderr()) ? true
      : undefined))
    await sql(`update jobs set lease_expires_at = now() where state = 'running'`)
    services.push(await ServiceProcess.start(env, cleanup))

    assert.equal(await run.code, 0, run.stderr())
    const reply = JSON.parse(run.stdout())
    console.log('chaos', JSON.stringify({ scenario: 'sandbox advance, the only instance SIGKILL',
      target, reply }))
    assert.ok(Date.parse(reply.now) >= Date.parse(target),
      `the clock reached the advance's target (${reply.now}, target ${target})`)
    assert.deepEqual(await job(jobId), { state: 'done', attempts: 2, lease_owner: null })
    assert.match(run.stderr(), /: done on attempt 2\n$/)
    const [left] = await sql<{ n: string }>(
      `select count(*)::text as n from jobs where kind = 'clearing.cycle' and (state = 'running' or (state = 'queued' and due_at <= $1))`,
      [target],
    )
    assert.equal(left?.n, '0', 'every cycle on the way ran')
    assert.equal(services[1]!.unexpectedExit, undefined)
  })
}
