import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { accountNumberOf, fund, internalBody, magic, newAccount, snapshot, transferBody } from './helpers.ts'

// What the incumbent's reference client sends with a payment and reads back
// (docs/guides/moving-from-the-incumbent.md): every field of its record, absent ones as
// null and beneficiary_version as 0; `notification_email` and `notification_name` are known fields
// (the payment advice itself is tested in payment-advice.test.ts); `beneficiary_id` names a saved
// beneficiary, which this bank does not offer. Its reader fails on any reply key its record lacks,
// so the reply body is exactly {tx_id, amount} and the status travels in `Bank-Tx-Status`.

const tb = useTestBank()
let p: TestPartner
/** Funded well beyond every amount below, so that only the rule under test can refuse. */
let account: string
let payeeNumber: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  account = await newAccount(p)
  await fund(tb, account, 1_000_000_000)
  payeeNumber = await accountNumberOf(p, await newAccount(p))
})

/** Both payment operations, each with a valid body of its own. */
const operations = [
  {
    label: 'transfer_eft_rtc',
    subject: () => `svc.account.${p.partnerId}.transfer_eft_rtc`,
    body: (overrides: Record<string, unknown> = {}) => transferBody(account,
      overrides) as unknown as Record<string, unknown>,
    send: (body: Record<string, unknown>) => p.client.accounts.transfer(body as never),
  },
  {
    label: 'transfer_internal',
    subject: () => `svc.account.${p.partnerId}.transfer_internal`,
    body: (overrides: Record<string, unknown> = {}) => internalBody(account, payeeNumber,
      overrides) as unknown as Record<string, unknown>,
    send: (body: Record<string, unknown>) => p.client.accounts.transferInternal(body as never),
  },
]

/** The body as a default Jackson ObjectMapper writes the reference client's record. */
function asJackson(body: Record<string, unknown>, label: string): Record<string, unknown> {
  const common = { notification_email: null, notification_name: null, beneficiary_id: null,
    beneficiary_version: 0 }
  return label === 'transfer_eft_rtc' ? { pay_and_clear: false, ...body, ...common }
    : { ...body, ...common }
}

for (const op of operations) {
  test(`transfers - ${op.label} as the reference client sends it (nulls, version 0) is accepted`, async () => {
    const reply = await rawRequest(tb, op.subject(), JSON.stringify(asJackson(op.body(), op.label)),
      { token: p.token })
    assert.equal(reply.code, 200, JSON.stringify(reply.body))
    assert.deepEqual(Object.keys(reply.body).sort(), ['amount', 'tx_id'],
      'exactly the reference record components')
    assert.ok(reply.headers['Bank-Tx-Status'])
  })

  test(`transfers - ${op.label} accepts a notification e-mail and name, and a beneficiary_version`, async () => {
    const sent = await op.send(op.body({ notification_email: 'payee@example.com',
      notification_name: 'Jane Payee', beneficiary_version: 3 }))
    assert.ok(sent.tx_id)
    const longest = await op.send(op.body({ notification_email: `${'a'.repeat(64)}@example.com`,
      notification_name: 'n'.repeat(100) }))
    assert.ok(longest.tx_id)
  })

  const refused: Array<[string, string, unknown]> = [
    ['notification_email', 'not an address', 'not-an-email'],
    ['notification_email', 'a number', 42],
    ['notification_email', 'an empty string', ''],
    ['notification_email', 'longer than 254 characters', `${'a'.repeat(250)}@example.com`],
    ['notification_name', 'an empty string', ''],
    ['notification_name', 'only spaces', '   '],
    ['notification_name', '101 characters', 'n'.repeat(101)],
    ['notification_name', 'a number', 7],
    ['beneficiary_version', 'negative', -1],
    ['beneficiary_version', 'a fraction', 1.5],
    ['beneficiary_version', 'a string', '0'],
    ['beneficiary_version', 'beyond a Java int', 2_147_483_648],
  ]
  for (const [field, label, value] of refused) {
    test(`transfers - ${op.label} with ${field} ${label} is 400 naming ${field} and moves nothing`, async () => {
      const before = await snapshot(p, account)
      await expectRefusal(op.send(op.body({ [field]: value })), 400, field)
      assert.deepEqual(await snapshot(p, account), before)
    })
  }

  test(`transfers - ${op.label} with any beneficiary_id is 400 saying saved beneficiaries are not offered`, async () => {
    const before = await snapshot(p, account)
    for (const value of ['7b0c8c36-7d5e-4a43-9d53-5d0b1d1e4c11', 'beneficiary-1', '', 0, 12,
        true, {}, []]) {
      const error = await expectRefusal(op.send(op.body({ beneficiary_id: value })), 400,
        'beneficiary_id')
      const detail = (error.details as Array<{ field: string; message: string }>).find(
        (d) => d.field === 'beneficiary_id')
      assert.match(detail?.message ?? '', /saved beneficiaries are not offered/, JSON.stringify(value))
    }
    assert.deepEqual(await snapshot(p, account), before)
  })

  test(`transfers - ${op.label} with beneficiary_id null, or left out, is accepted`, async () => {
    const withNull = await rawRequest(tb, op.subject(),
      JSON.stringify({ ...op.body(), beneficiary_id: null }), { token: p.token })
    assert.equal(withNull.code, 200, JSON.stringify(withNull.body))
    assert.ok((await op.send(op.body())).tx_id)
  })

  test(`transfers - ${op.label} still refuses fields the reference client does not send`, async () => {
    await expectRefusal(op.send(op.body({ beneficiary_name: 'Saved Payee' })), 400,
      'beneficiary_name')
  })

  test(`transfers - ${op.label}: a required field sent as null is 400 "is required"`, async () => {
    const reply = await rawRequest(tb, op.subject(), JSON.stringify({ ...op.body(), ref: null }),
      { token: p.token })
    assert.equal(reply.code, 400)
    assert.deepEqual(reply.body.error.details, [{ field: 'ref', message: 'is required' }])
  })
}

/** Sends the body raw and returns the reply's status header, checking the body's keys. */
async function wireStatus(subject: string, body: Record<string,
    unknown>): Promise<string | undefined> {
  const reply = await rawRequest(tb, subject, JSON.stringify(body), { token: p.token })
  assert.equal(reply.code, 200, JSON.stringify(reply.body))
  assert.deepEqual(Object.keys(reply.body).sort(), ['amount', 'tx_id'])
  assert.equal(reply.body.amount, String(body.amount))
  return reply.headers['Bank-Tx-Status']
}

test('transfers - Bank-Tx-Status carries each outcome: Pending EFT, Successful, Failed and Invalid RTC', async () => {
  const subject = `svc.account.${p.partnerId}.transfer_eft_rtc`
  assert.equal(await wireStatus(subject, transferBody(account) as never), 'Pending')
  assert.equal(await wireStatus(subject, transferBody(account, { pay_and_clear: true }) as never),
    'Successful')
  assert.equal(await wireStatus(subject, transferBody(account,
    { pay_and_clear: true, account_number: magic.failed }) as never), 'Failed')
  assert.equal(await wireStatus(subject, transferBody(account,
    { pay_and_clear: true, account_number: magic.invalid }) as never), 'Invalid')
})

test("transfers - our SDK's result carries the status the header brought", async () => {
  const eft = await p.client.accounts.transfer(transferBody(account))
  assert.deepEqual(Object.keys(eft).sort(), ['amount', 'status', 'tx_id'])
  assert.equal(eft.status, 'Pending')
  const failed = await p.client.accounts.transfer(
    transferBody(account, { pay_and_clear: true, account_number: magic.failed }))
  assert.equal(failed.status, 'Failed')
})

test('transfers - the ledger verifies clean after reference-client requests', async () => {
  await assertLedgerClean(tb)
})
