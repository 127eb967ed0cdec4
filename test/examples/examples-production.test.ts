import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { main as bulkBatch } from '../../examples/bulk-batch.ts'
import { main as cardSpend } from '../../examples/card-spend.ts'
import { main as debitOrder } from '../../examples/debit-order.ts'
import { main as firstPayment } from '../../examples/first-payment.ts'
import { SandboxRequired } from '../../examples/shared.ts'
import { useTestBank } from '../support/harness.ts'

// The examples need a sandbox (they fund partners by deposit, read one-time PINs and move
// the clock). Against a bank in production mode (DATABASE_URL set, BANK_SANDBOX not true)
// each stops before it changes anything, saying so and naming the setting, instead of
// failing half-way with a partner onboarded and never funded.

const tb = useTestBank({ env: { BANK_SANDBOX: 'false' } })

before(async () => {
  await tb.ready
})

test('examples - in production mode each example stops before changing anything and names the sandbox setting', async () => {
  const env = { NATS_URL: tb.natsUrl, BANK_OPERATOR_TOKEN: tb.operatorToken }
  const before = await tb.operator.partners.list()
  for (const main of [firstPayment, bulkBatch, debitOrder, cardSpend]) {
    const lines: string[] = []
    await assert.rejects(main(env, (line) => lines.push(line)), (error: unknown) => {
      assert.ok(error instanceof SandboxRequired, String(error))
      assert.match(error.message, /need a bank in sandbox mode/)
      assert.match(error.message, /nothing was changed/)
      assert.match(error.message, /BANK_SANDBOX=true/)
      return true
    })
    assert.ok(lines.every((line) => !/Onboard/.test(line)), lines.join('\n'))
  }
  assert.deepEqual(await tb.operator.partners.list(), before, 'no partner was onboarded')
})
