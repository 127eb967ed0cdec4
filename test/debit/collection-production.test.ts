import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { expectRefusal } from '../support/assertions.ts'

// Outside the sandbox the debtor's bank reports disputes: an operator cannot raise one
// (ops.debit.dispute → 403), while runs on demand (ops.debit.run) still answer.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'false' } })

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
})

test('collection - production refuses a dispute raised by the operator (403); a run on demand answers', async () => {
  await expectRefusal(tb.operator.debit.dispute({ debit_order_id: randomUUID() }), 403)
  const report = await tb.operator.debit.run({ date: '2026-11-25' })
  assert.equal(report.successful, 0)
})
