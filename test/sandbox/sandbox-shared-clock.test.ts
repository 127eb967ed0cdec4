import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startBank, type Bank } from '../../src/app.ts'
import { ManualClock, type Clock } from '../../src/clock.ts'
import { BankError } from '../../src/errors.ts'
import { createLogger } from '../../src/logger.ts'
import { SandboxClock } from '../../src/sandbox/sandbox-clock.ts'
import { storage, useTestBank } from '../support/harness.ts'

// The sandbox clock kept in the database: bank time is wall time plus one shared offset,
// so every instance reads one time, and no instance can take it back.

const tb = useTestBank()
/** Wall time for these clocks, standing still so that the times compared are exact. */
const wall = new ManualClock('2026-11-22T12:00:00Z')
// A plain Clock rather than the ManualClock itself: a bank given a ManualClock moves that
// clock instead of the shared offset (the tests' path), and these banks must share.
const wallClock: Clock = { now: () => wall.now() }

before(async () => {
  await tb.ready
})

test('sandbox - two clocks over one database agree once refreshed, and neither moves the other back', async () => {
  const db = tb.bank.database.db
  const a = new SandboxClock(db, wallClock)
  const b = new SandboxClock(db, wallClock)
  await Promise.all([a.refresh(), b.refresh()])
  const start = a.now().getTime()
  assert.equal(b.now().getTime(), start)
  await a.moveTo(new Date(start + 3_600_000))
  assert.equal(a.now().getTime(), start + 3_600_000, 'the mover knows at once')
  await b.refresh()
  assert.equal(b.now().getTime(), start + 3_600_000, 'the other instance after its refresh')
  await b.moveTo(new Date(start + 60_000))
  assert.equal(b.now().getTime(), start + 3_600_000, 'a move to an earlier time leaves the clock')
  await a.refresh()
  assert.equal(a.now().getTime(), start + 3_600_000)
  wall.advance(1_000)
  assert.equal(a.now().getTime(), start + 3_601_000, 'bank time runs on with the wall')
  const fresh = new SandboxClock(db, wallClock)
  await fresh.refresh()
  assert.equal(fresh.now().getTime(), start + 3_601_000,
    'a new instance starts from the shared offset')
})

if (storage === 'postgres') {
  // Two banks of their own (one queue group, not the test bank's) on the test bank's
  // PostgreSQL database, each with the shared clock over the same wall clock.
  describe('two instances sharing one PostgreSQL', () => {
    const banks: Bank[] = []

    before(async () => {
      await tb.ready
      const group = `sandbox-shared-${process.pid}`
      for (let i = 0; i < 2; i++) {
        banks.push(
          await startBank({
            config: { ...tb.config, sandbox: true, serviceName: group, queueGroup: group },
            clock: wallClock,
            log: createLogger('silent'),
            natsUrl: tb.natsUrl,
            validateResponses: true,
          }),
        )
      }
    })

    after(async () => {
      for (const bank of banks) await bank.stop()
    })

    test('sandbox - two instances: an advance on one is the time of the other; the other cannot take it back', async () => {
      const [a, b] = banks as [Bank, Bank]
      const before = (await b.services.sandbox.now()).now
      const moved = await a.services.sandbox.advance({ seconds: 2 * 86_400 })
      assert.equal(moved.now, new Date(Date.parse(before) + 2 * 86_400_000).toISOString())
      assert.deepEqual(await b.services.sandbox.now(), { now: moved.now })
      await assert.rejects(b.services.sandbox.advance({ to: before }), (error: unknown) => {
        assert.ok(error instanceof BankError)
        assert.equal(error.code, 400)
        assert.match(error.message, /never moves back/)
        return true
      })
      const further = await b.services.sandbox.advance({ seconds: 60 })
      assert.deepEqual(await a.services.sandbox.now(), { now: further.now })
    })
  })
}
