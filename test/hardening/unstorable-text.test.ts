import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { businessEntity } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, snapshot, transferBody } from '../transfers/helpers.ts'

// Text the database cannot store (NUL), cannot store as sent (an unpaired surrogate) or
// that no field needs (control characters) is refused with a 400 naming the field, on
// every operation, and changes nothing. Before this rule a NUL in a transfer's `ref` failed
// the whole grouped ledger write (500 for every partner in the batch), and an unpaired
// surrogate was stored as U+FFFD but hashed as sent, breaking `ledger verify`.

const tb = useTestBank()
let a: TestPartner
let b: TestPartner

before(async () => {
  await tb.ready
  a = await onboardPartner(tb, { approve: true })
  b = await onboardPartner(tb, { approve: true })
})

const hostile = {
  nul: 'Invoice\u00004',
  surrogate: 'Invoice \ud800',
  lowSurrogate: 'Invoice \udc00 x',
  bell: 'Invoice\u0007',
  newline: 'Invoice\n42',
  c1: 'Invoice\u009b42',
}

for (const [kind, value] of Object.entries(hostile)) {
  for (const field of ['ref', 'own_ref', 'name'] as const) {
    test(`hardening - a transfer with ${kind} in ${field} is refused with 400 naming the field and moves nothing`, async () => {
      const account = await newAccount(a)
      await fund(tb, account, 100_000)
      const before = await snapshot(a, account)
      await expectRefusal(a.client.accounts.transfer(transferBody(account, { [field]: value })),
        400, field)
      assert.deepEqual(await snapshot(a, account), before)
    })
  }
}

test('hardening - NUL, surrogates and control characters are refused in entity, address and user fields', async () => {
  const entity = businessEntity()
  await expectRefusal(a.client.entities.create({ ...entity, name: hostile.nul }), 400, 'name')
  await expectRefusal(a.client.entities.create({ ...entity, trading_name: hostile.surrogate }), 400,
    'trading_name')
  const created = await a.client.entities.create(entity)
  await expectRefusal(
    a.client.entities.updateAddress({ entity_id: created.id, address_line_1: '1 Main Rd',
      city: hostile.bell }),
    400,
    'city',
  )
  const { entities } = await a.client.entities.list()
  assert.equal(entities.filter((e) => e.name === hostile.nul).length, 0)
})

test('hardening - a hostile key name is refused without echoing the character back', async () => {
  const reply = await rawRequest(tb, `svc.entity.${a.partnerId}.info`,
    '{"entity_id":"x","a\\u0000b":1}', { token: a.token })
  assert.equal(reply.code, 400)
  assert.ok(!JSON.stringify(reply.body).includes('\\u0000'), 'the NUL is not echoed')
  assert.equal(reply.body.error.details[0].field, 'a?b')
})

test('hardening - a request nested deeper than any operation needs is refused with 400', async () => {
  const deep = `{"entity_id":${'['.repeat(40)}1${']'.repeat(40)}}`
  const reply = await rawRequest(tb, `svc.entity.${a.partnerId}.info`, deep, { token: a.token })
  assert.equal(reply.code, 400)
})

test('hardening - one partner sending NUL text never fails another partner\'s transfers in the same batch', async () => {
  const accountA = await newAccount(a)
  const accountB = await newAccount(b)
  await fund(tb, accountA, 10_000_000)
  await fund(tb, accountB, 10_000_000)
  const good = Array.from({ length: 60 }, () => a.client.accounts.transfer(transferBody(accountA)))
  const bad = Array.from({ length: 20 }, (_, i) =>
    b.client.accounts.transfer(
        transferBody(accountB, { ref: i % 2 ? hostile.nul : hostile.surrogate })).then(
      () => 'accepted',
      (error: { code?: number }) => error.code,
    ),
  )
  const results = await Promise.all(good)
  assert.equal(results.length, 60)
  for (const r of results) assert.equal(r.status, 'Pending')
  assert.deepEqual(new Set(await Promise.all(bad)), new Set([400]))
  await assertLedgerClean(tb)
})
