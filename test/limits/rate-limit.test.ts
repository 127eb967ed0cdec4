import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startBank, type Bank } from '../../src/app.ts'
import type { Caller } from '../../src/auth/credential-store.ts'
import { ManualClock } from '../../src/clock.ts'
import { loadConfig } from '../../src/config.ts'
import { RateLimited } from '../../src/errors.ts'
import { RateLimiter, databaseTokens, rate_limiter_defaults, requestCost } from '../../src/limits/rate-limiter.ts'
import { createLogger } from '../../src/logger.ts'
import { expectApiError } from '../support/assertions.ts'
import { businessEntity } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, storage, useTestBank, type RawReply, type TestPartner } from '../support/harness.ts'

// Request budgets (docs/operations.md; issue 28). The bank's defaults here are 20
// requests per second with a burst of 40, and the limiter's clock (the bank's wall clock)
// stands still unless a test moves it: nothing refills by itself, so every count is exact.
// A lease takes 100 ms worth of the rate (rate_limiter_defaults.lease_ms): 2 tokens at 20/s.
// Each test first moves the clock a minute on, which refills every bucket (the operator's
// among them) and lets every lease lapse.

const defaults = { requests_per_second: 20, burst: 40 }
const wall = new ManualClock('2026-11-23T08:00:00Z')
const tb = useTestBank({
  wallClock: wall,
  env: { BANK_RATE_PER_SECOND: String(defaults.requests_per_second),
    BANK_RATE_BURST: String(defaults.burst) },
})

before(async () => {
  await tb.ready
})

const quietMinute = () => wall.advance(60_000)

/** A cheap partner request (its entities), as the partner's credential or another token of it. */
function listEntities(partner: TestPartner, token = partner.token): Promise<RawReply> {
  return rawRequest(tb, `svc.entity.${partner.partnerId}.list-entities`, '{}', { token })
}

/** Sends `count` requests one after another; the reply codes in order. */
async function codesOf(count: number, send: () => Promise<RawReply>): Promise<number[]> {
  const codes: number[] = []
  for (let i = 0; i < count; i++) codes.push((await send()).code)
  return codes
}

const times = (count: number, code: number) => Array.from({ length: count }, () => code)

function assertRateLimited(reply: RawReply, retryAfterMs: number): void {
  assert.equal(reply.code, 429, JSON.stringify(reply.body))
  assert.equal(reply.body.error.type, 'rate_limited')
  assert.match(reply.body.error.message, /request budget is spent/)
  assert.equal(reply.headers['Retry-After-Ms'], String(retryAfterMs))
}

test('rate limits - over the burst a credential is refused with 429 rate_limited and Retry-After-Ms; after that wait it is let through again', async () => {
  quietMinute()
  const partner = await onboardPartner(tb)
  assert.deepEqual(await codesOf(defaults.burst, () => listEntities(partner)),
    times(defaults.burst, 200), 'the whole burst is let through')
  // The bucket is empty: the next lease is 2 tokens away, at 20 per second 100 ms.
  assertRateLimited(await listEntities(partner), 100)
  wall.advance(99)
  assertRateLimited(await listEntities(partner), 1)
  wall.advance(1)
  assert.deepEqual(await codesOf(3, () => listEntities(partner)), [200, 200, 429],
    'what refilled in 100 ms, and no more')
})

test('rate limits - a request costs a token for each 64 KiB of it begun: ten of 200 KiB spend the burst of 40; one larger than the burst costs the burst', async () => {
  quietMinute()
  const partner = await onboardPartner(tb)
  const big = JSON.stringify({ padding: 'x'.repeat(200 * 1024 - 20) })
  assert.equal(requestCost(Buffer.byteLength(big)), 4)
  const subject = `svc.entity.${partner.partnerId}.list-entities`
  // Each is refused for its size (400) after its tokens were taken, before its body was read.
  assert.deepEqual(await codesOf(10, () => rawRequest(tb, subject, big,
    { token: partner.token })), times(10, 400))
  assertRateLimited(await listEntities(partner), 100)

  // With a burst of 3, the same request costs the whole burst, once.
  quietMinute()
  const small = await onboardPartner(tb)
  await tb.operator.partners.limits({ partner_id: small.partnerId, requests_per_second: 20,
    burst: 3 })
  quietMinute()
  assert.equal((await rawRequest(tb, `svc.entity.${small.partnerId}.list-entities`, big,
    { token: small.token })).code, 400)
  assert.equal((await listEntities(small)).code, 429, 'the burst is spent')
})

test('rate limits - a refused request changes nothing: a partner\'s create makes no entity, an operator\'s deposit moves no money', async () => {
  quietMinute()
  const partner = await onboardPartner(tb, { approve: true })
  const { accounts } = await partner.client.accounts.getByEntity(
    { entity_id: partner.rootEntityId })
  const accountId = accounts[0]!.account_id
  const spent = await codesOf(defaults.burst, () => listEntities(partner))
  assert.equal(spent.filter((code) => code === 200).length, defaults.burst - 1,
    'one request of the burst went to reading the account')
  const entity = businessEntity()
  const refused = await rawRequest(tb, `svc.entity.${partner.partnerId}.create`,
    JSON.stringify(entity), { token: partner.token })
  assertRateLimited(refused, 100)

  // The operator's credential has a budget of its own: spend it, then try a deposit.
  const before = await tb.operator.accounts.show({ account_id: accountId })
  await codesOf(defaults.burst, () => rawRequest(tb, 'ops.partner.list', '{}',
    { token: tb.operatorToken }))
  const deposit = await rawRequest(tb, 'ops.account.deposit',
      JSON.stringify({ account_id: accountId, amount: 5_000, ref: 'refused' }), {
    token: tb.operatorToken,
  })
  assert.equal(deposit.code, 429)
  assert.equal(deposit.body.error.type, 'rate_limited')

  quietMinute()
  const { entities } = await partner.client.entities.list()
  assert.deepEqual(entities.map((e) => e.id), [partner.rootEntityId],
    'the refused create made no entity')
  const after = await tb.operator.accounts.show({ account_id: accountId })
  assert.deepEqual([after.balance, after.available_balance],
    [before.balance, before.available_balance], 'the refused deposit moved no money')
})

test('rate limits - an operator sets a partner\'s limits: each of its credentials has them at once; another partner\'s budget is untouched; reset returns the defaults', async () => {
  quietMinute()
  const partner = await onboardPartner(tb)
  const other = await onboardPartner(tb)
  assert.deepEqual(budget(await tb.operator.partners.limits({ partner_id: partner.partnerId })), {
    partner_id: partner.partnerId, ...defaults, bank_default: true,
  })
  // Spend a little under the defaults first: the new limits apply to what is left.
  assert.deepEqual(await codesOf(3, () => listEntities(partner)), [200, 200, 200])

  const set = await tb.operator.partners.limits({ partner_id: partner.partnerId,
    requests_per_second: 5, burst: 10 })
  assert.deepEqual(budget(set), { partner_id: partner.partnerId, requests_per_second: 5, burst: 10,
    bank_default: false })
  assert.deepEqual(await tb.operator.partners.limits({ partner_id: partner.partnerId }), set,
    'shown as set')
  assert.deepEqual(await codesOf(11, () => listEntities(partner)), [...times(10, 200), 429],
    'the bucket is capped at the new burst')
  // A lease at 5 per second is one token: 200 ms away.
  assertRateLimited(await listEntities(partner), 200)
  const second = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read'], label: 'second' })
  assert.deepEqual(await codesOf(11, () => listEntities(partner, second.token)),
    [...times(10, 200), 429], 'a second credential has a budget of its own, under the same limits')

  assert.deepEqual(await codesOf(defaults.burst + 1, () => listEntities(other)),
    [...times(defaults.burst, 200), 429], 'another partner keeps the defaults')

  // Raised: a second refills 100 tokens, capped at the new burst of 30.
  await tb.operator.partners.limits({ partner_id: partner.partnerId, requests_per_second: 100,
    burst: 30 })
  wall.advance(1_000)
  assert.deepEqual(await codesOf(31, () => listEntities(partner)), [...times(30, 200), 429])

  const reset = await tb.operator.partners.limits({ partner_id: partner.partnerId, reset: true })
  assert.deepEqual(budget(reset), { partner_id: partner.partnerId, ...defaults,
    bank_default: true })
  wall.advance(10_000)
  assert.deepEqual(await codesOf(defaults.burst + 1, () => listEntities(partner)),
    [...times(defaults.burst, 200), 429], 'the defaults again')
})

test('rate limits - ops.partner.limits refuses half a change, a reset with limits, limits out of range and an unknown partner', async () => {
  quietMinute()
  const partner = await onboardPartner(tb)
  const limits = tb.operator.partners.limits
  const refusals: Array<[Parameters<typeof limits>[0], number, string]> = [
    [{ partner_id: partner.partnerId, requests_per_second: 10 }, 400, 'burst'],
    [{ partner_id: partner.partnerId, burst: 10 }, 400, 'requests_per_second'],
    [{ partner_id: partner.partnerId, requests_per_second: 10, burst: 10, reset: true }, 400,
      'reset'],
    [{ partner_id: partner.partnerId, requests_per_second: 0, burst: 10 }, 400,
      'requests_per_second'],
    [{ partner_id: partner.partnerId, requests_per_second: 1_000_001, burst: 10 }, 400,
      'requests_per_second'],
    [{ partner_id: partner.partnerId, requests_per_second: 10, burst: 10_000_001 }, 400, 'burst'],
    [{ partner_id: partner.partnerId, requests_per_second: 1.5, burst: 10 }, 400,
      'requests_per_second'],
  ]
  for (const [request, code, field] of refusals) {
    const error = await expectApiError(limits(request), code)
    assert.deepEqual(error.details.map((d) => (d as { field: string }).field), [field],
      JSON.stringify(request))
  }
  await expectApiError(limits({ partner_id: '00000000-0000-4000-8000-000000000000',
    requests_per_second: 10, burst: 10 }), 404)
  // The limits at their bounds are taken; nothing refused above changed them.
  assert.equal((await limits({ partner_id: partner.partnerId })).bank_default, true)
  assert.deepEqual(budget(await limits({ partner_id: partner.partnerId, requests_per_second: 1,
      burst: 1 })), {
    partner_id: partner.partnerId, requests_per_second: 1, burst: 1, bank_default: false,
  })
  assert.deepEqual(budget(await limits({ partner_id: partner.partnerId,
      requests_per_second: 1_000_000, burst: 10_000_000 })), {
    partner_id: partner.partnerId, requests_per_second: 1_000_000, burst: 10_000_000,
      bank_default: false,
  })
})

test('rate limits - the bank\'s defaults are 200 requests per second with a burst of 400; BANK_RATE_PER_SECOND and BANK_RATE_BURST take 1 to their maximum', () => {
  assert.deepEqual(loadConfig({}).rateLimits, { requests_per_second: 200, burst: 400 })
  assert.deepEqual(loadConfig({ BANK_RATE_PER_SECOND: '1', BANK_RATE_BURST: '1' }).rateLimits,
    { requests_per_second: 1, burst: 1 })
  assert.deepEqual(loadConfig({ BANK_RATE_PER_SECOND: '1000000', BANK_RATE_BURST: '10000000' })
    .rateLimits, { requests_per_second: 1_000_000, burst: 10_000_000 })
  const refused = [['BANK_RATE_PER_SECOND', '0'], ['BANK_RATE_PER_SECOND', '1000001'],
    ['BANK_RATE_BURST', '0'], ['BANK_RATE_BURST', '10000001'], ['BANK_RATE_BURST', '1.5']] as const
  for (const [name, value] of refused) {
    assert.throws(() => loadConfig({ [name]: value }), (error: Error) => error.message.includes(
      `${name}="${value}" is not valid: must be a whole number from 1 to`))
  }
})

/** The request budget of a partner's limits (its NATS account's: test/transport/nats-limits). */
function budget({ nats: _nats, ...rest }: { nats: unknown } & Record<string, unknown>) {
  return rest
}

/**
 * Calls `take` `count` times at once, spread over the limiters in turn; how many were let through.
 */
async function takeAtOnce(limiters: RateLimiter[], caller: Caller, count: number): Promise<number> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => Promise.resolve().then(
      () => limiters[i % limiters.length]!.take(caller))),
  )
  const refusals = outcomes.filter((o) => o.status === 'rejected')
  for (const refusal of refusals) assert.ok(refusal.reason instanceof RateLimited,
    String(refusal.reason))
  return count - refusals.length
}

test('rate limits - two limiters on one database share each credential\'s bucket: together they take the burst, then what refills, never more', async () => {
  quietMinute()
  const partner = await onboardPartner(tb)
  const caller = await tb.bank.services.credentials.verify(partner.token)
  // Limiters of their own (as two instances would have) on the bank's database, with a clock of
  // their own.
  const clock = new ManualClock('2026-11-23T09:00:00Z')
  const options = { ...rate_limiter_defaults, defaults: { requests_per_second: 100, burst: 50 } }
  const tokens = databaseTokens(tb.bank.database.db)
  const limiters = [new RateLimiter(tokens, clock, options), new RateLimiter(tokens, clock,
    options)]
  // Each takes one first, so that both hold a lease of the bucket (at once, a loaded machine
  // let one lease it all before the other's statement ran); then 200 at once over both.
  for (const limiter of limiters) await limiter.take(caller)
  assert.equal(2 + await takeAtOnce(limiters, caller, 198), 50,
    'the burst, leased 10 at a time by both')
  assert.ok(limiters.every((l) => l.counts().taken > 0),
    `both took part: ${JSON.stringify(limiters.map((l) => l.counts()))}`)
  assert.equal(await takeAtOnce(limiters, caller, 200), 0,
    'nothing refills while the clock stands still')
  clock.advance(100)
  assert.equal(await takeAtOnce(limiters, caller, 200), 10, '100 ms at 100 per second')
  clock.advance(60_000)
  assert.equal(await takeAtOnce(limiters, caller, 200), 50,
    'a quiet minute refills the bucket up to its burst, no further')
  const statements = limiters.reduce((sum, l) => sum + l.counts().leases, 0)
  assert.ok(statements < 40, `leases, not a statement per request: ${statements} statements for ` +
    `110 requests let through and 690 refused`)
})

test('rate limits - a card network\'s credential takes its own budget, not the bank\'s default for a credential', async () => {
  quietMinute()
  const partner = await onboardPartner(tb)
  const network = await tb.bank.services.credentials.issueCardNetwork({ label: 'budget network' })
  const networkCaller = await tb.bank.services.credentials.verify(network.token)
  const partnerCaller = await tb.bank.services.credentials.verify(partner.token)
  assert.equal(networkCaller.role, 'card_network')
  const clock = new ManualClock('2026-11-23T09:00:00Z')
  const limiter = new RateLimiter(databaseTokens(tb.bank.database.db), clock, {
    ...rate_limiter_defaults, defaults: { requests_per_second: 100, burst: 20 },
    card_network: { requests_per_second: 1000, burst: 300 },
  })
  assert.equal(await takeAtOnce([limiter], partnerCaller, 400), 20, 'the default burst')
  assert.equal(await takeAtOnce([limiter], networkCaller, 400), 300, 'the network\'s own burst')
})

if (storage === 'postgres') {
  describe('two instances sharing one PostgreSQL', () => {
    let second: Bank

    before(async () => {
      await tb.ready
      second = await startBank({ config: tb.config, clock: tb.clock, wallClock: wall,
        log: createLogger('silent'), natsUrl: tb.natsUrl, validateResponses: true })
    })

    after(async () => {
      await second?.stop()
    })

    test('rate limits - two instances in one queue group together let a credential through at most its burst, and follow a change of its limits', async () => {
      quietMinute()
      const partner = await onboardPartner(tb)
      await tb.operator.partners.limits({ partner_id: partner.partnerId, requests_per_second: 100,
        burst: 200 })
      const instances = [tb.bank, second]
      const before = instances.map((bank) => bank.services.limiter.counts())
      const sendAtOnce = async (count: number) => {
        const codes: number[] = []
        // In waves, so that both instances keep getting requests after the bucket is empty.
        for (let sent = 0; sent < count; sent += 20) {
          const replies = await Promise.all(Array.from({ length: 20 }, () => listEntities(partner)))
          for (const reply of replies) {
            if (reply.code === 429) assert.equal(reply.body.error.type, 'rate_limited')
            codes.push(reply.code)
          }
        }
        return codes
      }
      const codes = await sendAtOnce(600)
      assert.deepEqual([...new Set(codes)].sort(), [200, 429])
      assert.equal(codes.filter((c) => c === 200).length, 200,
        'exactly the burst, across both instances')
      const served = instances.map((bank, i) => bank.services.limiter.counts().taken
        - before[i]!.taken)
      assert.ok(served.every((n) => n > 0),
        `both instances let some through: ${served.join(' and ')}`)

      // Lowered through whichever instance answers the operator: each follows at its next lease.
      await tb.operator.partners.limits({ partner_id: partner.partnerId, requests_per_second: 100,
        burst: 50 })
      wall.advance(2_000)
      const lowered = await sendAtOnce(200)
      assert.equal(lowered.filter((c) => c === 200).length, 50,
        'the new burst, across both instances')
    })
  })
}
