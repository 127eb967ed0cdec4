import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, sast } from '../transfers/helpers.ts'
import { bankEnv, json, removeTempDirs, runBank } from '../cli/run-bank.ts'
import { batchBody, otpOf, payment } from './helpers.ts'

// `bank sandbox otp <bulk_payment_id>`: the operator's way to read a batch's PIN in a sandbox.

const tb = useTestBank()
let p: TestPartner
after(() => removeTempDirs())

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  const pool =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, pool, 1_000_000)
  tb.clock.set(sast('2026-11-23', '09:00'))
})

test('bulk - bank sandbox otp <bulk_payment_id> prints the PIN and its expiry', async () => {
  const body = batchBody(p.rootEntityId, [payment(1)])
  const initiated = await p.client.bulkPayments.initiate(body)
  const run = await runBank(['sandbox', 'otp', body.bulk_payment_id], bankEnv(tb))
  assert.equal(run.code, 0, run.stderr)
  assert.deepEqual(json(run), { otp: await otpOf(tb, p, body.bulk_payment_id),
    expires_at: initiated.expires_at })
  const unknown = await runBank(['sandbox', 'otp', 'no-such-batch'], bankEnv(tb))
  assert.notEqual(unknown.code, 0)
})
