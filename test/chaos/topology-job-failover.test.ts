import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { chaosPass } from './pass.ts'

// A job caught mid-run by a failover: an EFT clearing cycle is settling its chunks when the
// bank instance running it and the primary PostgreSQL node die at the same moment (SIGKILL).
// The chunks it committed are on the synchronous standby, which Patroni promotes; the chunk
// it was writing never committed. Nobody tells the other instance anything: it must take the
// cycle over by itself once the dead instance's lease on it runs out, and settle the rest.
// Every EFT must then be settled exactly once: none left Pending, none booked twice (one fee
// row each, the balances what the EFTs took), and `ledger verify` clean on the new primary.
// A payout recorded as sent is never sent again when its cycle is resumed (a file recorded and
// not yet written is written again, the same bytes), so that costs nothing.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup, until, withClient } = await import('./processes.ts')
  const topo = await import('./topology-faults.ts')
  const { loadLimits } = await import('./load.ts')
  type TopologyRun = import('./topology-faults.ts').TopologyRun

  const limits = {
    /** EFTs waiting for the cycle, in chunks of `chunk_max`: the cycle writes 30 chunks. */
    efts: 1_500,
    chunk_max: 50,
    senders: 32,
    /** The test: the EFTs, the failover, and the clearing job's lease (60 s) running out. */
    test_timeout_ms: 240_000,
    /** How often the test looks at the cycle's progress. */
    poll_ms: 20,
  }

  const cleanup = new Cleanup()
  after(() => cleanup.run())
  let run: TopologyRun | undefined

  before(
    async () => {
      if (topo.topologyMissing().length > 0) return
      // Small chunks, so that the cycle is certainly caught between two of them.
      const settings = { BANK_CLEARING_CHUNK_MAX: String(limits.chunk_max) }
      run = await topo.startTopology(cleanup, settings)
    },
    { timeout: topo.topologyFaultLimits.start_timeout_ms },
  )

  /** The partner's EFTs: how many are still Pending and how many are settled. */
  const progress = (url: string, partnerId: string) =>
    withClient(url, async (c) => {
      const { rows } = await c.query<{ pending: number; settled: number }>(
        `select (count(*) filter (where status = 'Pending'))::int as pending,
                (count(*) filter (where status <> 'Pending'))::int as settled
           from transactions
          where partner_id = $1 and tx_type = 'transfer' and tx_payment_type = 'EFT'`,
        [partnerId],
      )
      return rows[0]!
    })

  const jobOf = (url: string, id: string) =>
    withClient(url, async (c) => {
      const { rows } = await c.query<{
        state: string
        attempts: number
        lease_owner: string | null
        result: { settled?: number; resumed?: boolean } | null
      }>('select state, attempts, lease_owner, result from jobs where id = $1', [id])
      return rows[0]
    })

  /** Per EFT: its status, and how many fee rows and journals it has. */
  const bookings = (url: string, partnerId: string) =>
    withClient(url, async (c) => {
      const { rows } = await c.query<{
        status: string
        amount: string
        fee_rows: number
        fees: string
        journals: number
      }>(
        `select t.status, t.amount::text,
                (select count(*) from transactions f
                  where f.parent_tx_id = t.id and f.tx_type = 'fee')::int as fee_rows,
                (select coalesce(sum(f.debit), 0) from transactions f
                  where f.parent_tx_id = t.id and f.tx_type = 'fee')::text as fees,
                (select count(distinct p.journal_id) from postings p where p.tx_id = t.id)::int
                  as journals
           from transactions t
          where t.partner_id = $1 and t.tx_type = 'transfer' and t.tx_payment_type = 'EFT'`,
        [partnerId],
      )
      return rows
    })

  type ChaosBank = import('./load.ts').ChaosBank

  /** `limits.efts` EFTs to an outside bank, all waiting for the next clearing cycle. */
  async function sendEfts({ client, accounts }: ChaosBank): Promise<void> {
    let next = 0
    const sender = async () => {
      for (let n = next++; n < limits.efts; n = next++) {
        await client.accounts.transfer({
          account_id: accounts[n % accounts.length]!,
          clientTxId: randomUUID(),
          amount: 100 + (n % 900),
          ref: `clearing ${n}`,
          own_ref: `clearing failover ${n}`,
          account_number: '62000000001',
          branch_code: '250655',
          name: 'Clearing Recipient',
        })
      }
    }
    await Promise.all(Array.from({ length: limits.senders }, sender))
  }

  /** Waits until the cycle has settled part of the EFTs with four chunks or more to go. */
  async function catchMidRun(url: string, partnerId: string, jobId: string) {
    const caught = await until(
      'the cycle has settled part of the EFTs',
      async () => {
        const now = await progress(url, partnerId)
        // Gone past: reported below rather than waited for.
        if (now.pending < limits.chunk_max * 4) return { ...now, owner: '' }
        if (now.settled === 0) return undefined
        const job = await jobOf(url, jobId)
        return job?.lease_owner ? { ...now, owner: job.lease_owner } : undefined
      },
      limits.test_timeout_ms,
      limits.poll_ms,
    )
    assert.notEqual(caught.owner, '', `not caught mid-run: ${JSON.stringify(caught)}`)
    return { ...caught, ownerPid: Number(caught.owner.split(':').at(-2)) }
  }

  /** Every EFT settled once, and the accounts down by exactly what they and their fees took. */
  async function checkBooks(url: string, bank: ChaosBank) {
    const rows = await bookings(url, bank.partnerId)
    const balances = await Promise.all(
      bank.accounts.map(async (account_id) =>
        BigInt((await bank.client.accounts.getDetails({ account_id })).balance),
      ),
    )
    const spent = rows
      .filter((r) => r.status === 'Successful')
      .reduce((sum, r) => sum + BigInt(r.amount) + BigInt(r.fees), 0n)
    const funded = BigInt(loadLimits.account_funding_cents) * BigInt(bank.accounts.length)
    assert.equal(rows.length, limits.efts)
    assert.deepEqual(
      rows.filter((r) => r.status !== 'Successful').map((r) => r.status),
      [],
      'every EFT settled (the simulated rail accepts this recipient)',
    )
    const bookedTwice = rows.filter((r) => r.fee_rows > 1 || r.journals > 1).length
    assert.equal(bookedTwice, 0, 'no EFT booked twice')
    assert.equal(
      balances.reduce((a, b) => a + b, 0n),
      funded - spent,
      'the accounts lost exactly what their EFTs and fees took',
    )
    return { successful: rows.length, booked_twice: bookedTwice }
  }

  test(
    'topology - a clearing cycle caught mid-run when its instance and the primary die ' +
      'together: the other instance takes it over, every EFT settled exactly once',
    { timeout: limits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      await topo.explained(run!.topology, async () => {
        const { topology, services } = run!
        const url = topology.databaseUrl
        const { bank } = await topo.newFaultRun(run!, cleanup, true)
        await sendEfts(bank)
        assert.deepEqual(await progress(url, bank.partnerId), { pending: limits.efts, settled: 0 })
        const old = await topology.primary()
        assert.ok(old, 'the topology has a primary')
        const started = await bank.operator.clearing.run({ detach: true })
        assert.ok('job_id' in started, 'a detached cycle answers its job')
        const caught = await catchMidRun(url, bank.partnerId, started.job_id)
        const victim = services.find((s) => s.child.pid === caught.ownerPid)
        assert.ok(victim, `the cycle runs on one of the instances (${caught.owner})`)
        const killed = performance.now()
        await Promise.all([victim.kill(), topology.killNode(old)])

        const done = await until(
          'the cycle is done',
          async () => {
            const job = await jobOf(url, started.job_id)
            if (job?.state === 'dead') throw new Error(`the cycle died: ${JSON.stringify(job)}`)
            return job?.state === 'done' ? job : undefined
          },
          limits.test_timeout_ms,
        )
        const takenOverMs = Math.round(performance.now() - killed)
        const now = await topology.primary()
        const books = await checkBooks(url, bank)
        const ledger = await bank.operator.ledger.verify({})
        console.log(
          'topology',
          JSON.stringify({
            scenario: 'clearing cycle mid-run, its instance and the primary killed',
            efts: limits.efts,
            settled_when_caught: caught.settled,
            attempts: done.attempts,
            settled_by_the_taking_over_run: done.result?.settled,
            taken_over_and_done_ms: takenOverMs,
            new_primary: now?.name,
            ...books,
            ledger_ok: ledger.ok,
          }),
        )
        assert.notEqual(now?.name, old.name, 'the standby became the primary')
        assert.ok(done.attempts >= 2, 'the cycle was taken over after its instance died')
        assert.equal(done.result?.resumed, true, 'the run that finished it knew it resumed a cycle')
        assert.equal(ledger.ok, true, JSON.stringify(ledger))
      })
    },
  )
}
