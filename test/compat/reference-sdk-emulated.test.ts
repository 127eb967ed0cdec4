import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { pdf } from '../kyc/helpers.ts'
import { referenceSdkCardFlows } from './card-flows.ts'
import { referenceSdkDocumentFlows } from './document-flows.ts'
import { uploadKycDocuments } from './dropbox-uploader.ts'
import { businessEntityValues, prepareFlows, referenceSdkFlows, transferValues, userValues, type FlowContext } from './flows.ts'
import { detailFor, emulatedJackson } from './reference-sdk.ts'
import type { SdkMethod } from './sdk-records.ts'
import type { RecordValues } from './jackson.ts'

// The reference SDK's flows with requests written and replies read by our emulation of
// Jackson (jackson.ts, generated from sdk-records.ts), so that they run on any machine; the
// Jackson file runs the same flows through real Jackson. Here too: the reply rules a Java
// partner relies on (docs/guides/moving-from-the-incumbent.md), and the transaction list's
// paging as that client sees it (docs/guides/payments.md).

const tb = useTestBank()
let c: FlowContext

before(async () => {
  await tb.ready
  c = await prepareFlows(tb, emulatedJackson)
})

referenceSdkFlows('emulated Jackson', () => c)
referenceSdkDocumentFlows('emulated Jackson', () => c)
referenceSdkCardFlows('emulated Jackson', () => c)

const name = (behaviour: string) => `reference SDK - ${behaviour}`

test(name('an error reply carries Nats-Service-Error-Code and Nats-Service-Error, which the SDK turns into ServiceException'), async () => {
  for (const [method, values, code] of [
    ['entityInfo', { entity_id: randomUUID() }, 404],
    ['transactionGet', { tx_id: randomUUID() }, 404],
    ['accountDetails', { account_id: 'not-a-uuid' }, 400],
  ] as const) {
    const error = await c.sdk.expectError(method, await c.sdk.write(method, values), code)
    assert.equal(error.body.error.code, code)
  }
})

test(name('a saved beneficiary (a non-null beneficiary_id) is refused with a 400 naming it, and nothing moves'), async () => {
  const target = await c.sdk.call('accountCreate', { entity_id: c.rootEntityId })
  const before = await c.sdk.call('accountDetails', { account_id: c.fundedAccountId })
  const eft = transferValues(c.fundedAccountId, { beneficiary_id: randomUUID(),
    beneficiary_version: 1 })
  const internal = { ...internalValues(target.account_number), beneficiary_id: randomUUID(),
    beneficiary_version: 1 }
  for (const [method, values] of [['transferEftRtc', eft],
      ['transferInternal', internal]] as const) {
    const error = await c.sdk.expectError(method, await c.sdk.write(method, values), 400)
    assert.ok((detailFor(error, 'beneficiary_id').message ?? '').length > 0)
  }
  assert.deepEqual(await c.sdk.call('accountDetails', { account_id: c.fundedAccountId }), before)
  assert.equal((await c.sdk.call('accountDetails', { account_id: target.account_id })).balance, '0')
})

test(name('a required component sent as null is a 400 naming it with "is required"'), async () => {
  const cases: Array<[SdkMethod, RecordValues, string]> = [
    ['entityCreate', businessEntityValues({ email: null }), 'email'],
    ['entityCreate', businessEntityValues({ registration_number: null }), 'registration_number'],
    ['entityInfo', { entity_id: null }, 'entity_id'],
    ['entityUpdateAddress', { entity_id: c.rootEntityId, address_line_1: null, city: 'Durban' },
      'address_line_1'],
    ['userCreate', { ...userValues(c.rootEntityId), first_name: null }, 'first_name'],
    ['userUpdate', { user_id: null, first_name: 'Lindiwe' }, 'user_id'],
    ['accountCreate', { entity_id: null }, 'entity_id'],
    ['accountDetails', { account_id: null }, 'account_id'],
    ['accountsByEntity', { entity_id: null }, 'entity_id'],
    ['transactionList', { account_id: null, filter_user_ids: {} }, 'account_id'],
    ['transactionGet', { tx_id: null }, 'tx_id'],
    ['transferEftRtc', transferValues(c.fundedAccountId, { clientTxId: null }), 'clientTxId'],
    ['transferInternal', { ...internalValues('62000000001'), account_number: null },
      'account_number'],
    ['userUploadKycDocuments', { user_id: randomUUID(), id_document: null,
      proof_of_residence: 'kyc_proof' }, 'id_document'],
    ['kybGet', { entity_id: null }, 'entity_id'],
    ['kybSubmit', { entity_id: c.rootEntityId, documents: null, directors: null }, 'documents'],
    ['kybUpdate', { entity_id: c.rootEntityId, metadata: null }, 'metadata'],
    ['kybUpdateDirector', { entity_id: c.rootEntityId, director_id: null }, 'director_id'],
    ['kybSendVerificationEmail', { entity_id: null, director_id: 'd1' }, 'entity_id'],
  ]
  for (const [method, values, field] of cases) {
    // Written with every component, so that the null is on the wire even for EntityService.
    const error = await c.sdk.expectError(method, await c.sdk.write(method, values, 'always'), 400)
    assert.match(detailFor(error, field).message ?? '', /is required/, `${method}.${field}`)
  }
})

test(name("UploadKycApp's placeholder .txt files are refused: 400 naming the request field, the user's KYC unchanged"), async () => {
  const { userId } = await c.sdk.call('userCreate', userValues(c.rootEntityId))
  const text =
    (body: string) => ({ filename: 'id-front.txt', bytes: new TextEncoder().encode(body) })
  const upload = await uploadKycDocuments(tb.nc, userId, { front: text('front of id'),
    back: text('back of id'), proof: { filename: 'proof.pdf', bytes: pdf() } })
  const values = { user_id: userId, id_document: upload.idDocument,
    proof_of_residence: upload.proofOfResidence }
  const error = await c.sdk.expectError('userUploadKycDocuments',
    await c.sdk.write('userUploadKycDocuments', values), 400)
  assert.match(detailFor(error, 'id_document').message ?? '', /not a PDF, JPEG or PNG/)
  assert.equal(error.details.some((d) => d.field === 'proof_of_residence'), false, 'the PDF passes')
  const { users } = await c.sdk.call('userList', { entity_id: c.rootEntityId })
  assert.equal(users.find((u: { id: string }) => u.id === userId).kyc_status, 'not_started')
})

test(name('a field that is no component of the SDK record and not ours is still a 400 naming it'), async () => {
  const cases: Array<[SdkMethod, RecordValues, string]> = [
    ['transferEftRtc', transferValues(c.fundedAccountId), 'beneficiary_name'],
    ['entityCreate', businessEntityValues(), 'nickname'],
    ['transactionList', { account_id: c.fundedAccountId, filter_user_ids: {} },
      'filter_account_ids'],
    ['userCreate', userValues(c.rootEntityId), 'middle_name'],
  ]
  for (const [method, values, extra] of cases) {
    const body = { ...JSON.parse(await c.sdk.write(method, values)), [extra]: 'x' }
    const error = await c.sdk.expectError(method, JSON.stringify(body), 400)
    detailFor(error, extra)
  }
})

test(name('transaction list: filter_user_ids [] is no filter either'), async () => {
  const none = await c.sdk.call('transactionList', { account_id: c.fundedAccountId,
    filter_user_ids: null })
  const text = JSON.stringify({ account_id: c.fundedAccountId, filter_user_ids: [] })
  const empty = await c.sdk.accept('transactionList', await c.sdk.send('transactionList', text))
  assert.deepEqual(empty.transactions, none.transactions)
})

test(name('transaction list beyond 1000 rows: the SDK gets the newest 1000, no next_cursor key, the cursor in header Bank-Next-Cursor'), async () => {
  const { account_id } = await c.sdk.call('accountCreate', { entity_id: c.rootEntityId })
  const rows = 1001
  await depositRows(account_id, rows)

  const sdkPage = await c.sdk.callWithHeaders('transactionList',
    { account_id, filter_user_ids: {} })
  assert.equal(sdkPage.body.transactions.length, 1000)
  assert.equal('next_cursor' in sdkPage.body, false,
    'a request without limit or cursor gets no next_cursor key')
  const cursor = sdkPage.headers['Bank-Next-Cursor']
  assert.ok(cursor, 'more rows follow: the cursor is in the header')

  // A client of ours names `limit`, and gets the cursor in the body as well.
  const paged = await c.sdk.send('transactionList', JSON.stringify({ account_id, limit: 1000 }))
  assert.equal(paged.code, 200, paged.text)
  assert.equal(paged.body.transactions.length, 1000)
  assert.equal(paged.body.next_cursor, paged.headers['Bank-Next-Cursor'])
  assert.deepEqual(paged.body.transactions, sdkPage.body.transactions)

  // The last page: one row left, no cursor anywhere.
  const last = await c.sdk.send('transactionList',
    JSON.stringify({ account_id, limit: 1000, cursor: paged.body.next_cursor }))
  assert.equal(last.code, 200, last.text)
  assert.equal(last.body.transactions.length, 1)
  assert.equal('next_cursor' in last.body, false)
  assert.equal(last.headers['Bank-Next-Cursor'], undefined)

  // Exactly 1000 rows: everything fits, no cursor for the SDK either.
  const { account_id: exact } = await c.sdk.call('accountCreate', { entity_id: c.rootEntityId })
  await depositRows(exact, 1000)
  const full = await c.sdk.callWithHeaders('transactionList',
    { account_id: exact, filter_user_ids: null })
  assert.equal(full.body.transactions.length, 1000)
  assert.equal(full.headers['Bank-Next-Cursor'], undefined)
})

/** A TransferInternalRequest from the funded account to `accountNumber`. */
function internalValues(accountNumber: string): RecordValues {
  return {
    account_id: c.fundedAccountId,
    clientTxId: randomUUID(),
    amount: 1000,
    ref: 'Internal move',
    own_ref: 'sdk internal',
    account_number: accountNumber,
    name: 'Own account',
    notification_email: null,
    notification_name: null,
    beneficiary_id: null,
    beneficiary_version: 0,
  }
}

/**
 * Deposits one cent `rows` times, a bounded number at once: no more than the bank's
 * database pool (BANK_DB_POOL_MAX, 20), since a request that waits longer than the pool's
 * connection timeout for a connection is answered 503, and on a loaded machine a queue of
 * 100 did (this test is about paging, not load).
 */
async function depositRows(accountId: string, rows: number): Promise<void> {
  const deposits_at_once = 20
  for (let done = 0; done < rows; done += deposits_at_once) {
    const count = Math.min(deposits_at_once, rows - done)
    await Promise.all(Array.from({ length: count }, () => tb.operator.accounts.deposit(
      { account_id: accountId, amount: 1, ref: 'row' })))
  }
}
