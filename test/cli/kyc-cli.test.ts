import assert from 'node:assert/strict'
import { createHash, randomInt } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { businessEntity, numberedPersonalEntity } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { destroyBucketsAfter, jpeg, pdf, png, putObjects } from '../kyc/helpers.ts'
import { bankEnv, emptyDir, json, removeTempDirs, runBank } from './run-bank.ts'

// The operator's review of KYC and KYB documents from the command line: the commands derived
// from the ops.kyc/kyb/document/audit operations, and `bank kyc document <id> --out <file>`,
// which fetches a document part by part into a file and checks its SHA-256.

const tb = useTestBank()
destroyBucketsAfter(tb)
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

after(() => removeTempDirs())

const bank = (...args: string[]) => runBank(args, bankEnv(tb))
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const epoch = 1_763_800_000

/** A PDF of `size` bytes whose body varies, so that a part out of place changes the hash. */
function largePdf(size: number): Buffer {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 11)) % 251
  bytes.write('%PDF-1.7\n', 0, 'latin1')
  return bytes
}

/** A personal entity's user whose KYC documents (front, back, proof) were submitted. */
async function submittedUser(front: Uint8Array = pdf('front')) {
  const { user_id } = await p.client.entities.create(numberedPersonalEntity())
  const userId = user_id!
  const names = { front: `kyc_id_front_${userId}_${epoch}`, back: `kyc_id_back_${userId}_${epoch}`,
    proof: `kyc_proof_of_residence_${userId}_${epoch}` }
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: front, [names.back]: png(),
    [names.proof]: jpeg() }, 'scan.pdf')
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  return { userId, names }
}

test('kyc cli - list shows the pending submission; show lists its documents with their SHA-256', async () => {
  const { userId, names } = await submittedUser()
  const listed = json(await bank('kyc', 'list', '--partner', p.partnerId))
  const mine = listed.applications.find((a: { user_id: string }) => a.user_id === userId)
  assert.ok(mine, 'the submission waits for review')
  assert.equal(mine.documents, 3)
  assert.equal(mine.partner_id, p.partnerId)

  const shown = json(await bank('kyc', 'show', userId))
  assert.equal(shown.user.id, userId)
  assert.equal(shown.submission.state, 'pending')
  const byName = Object.fromEntries(shown.documents.map((d: { name: string }) => [d.name, d]))
  assert.deepEqual(Object.keys(byName).sort(), Object.values(names).sort())
  assert.equal(byName[names.front].sha256, sha256(pdf('front')))
  assert.equal(byName[names.proof].content_type, 'image/jpeg')

  const usage = await bank('kyc', 'show')
  assert.equal(usage.code, 2)
  assert.match(usage.stderr, /<user_id> is required/)
})

test('kyc cli - document --out fetches every part into the file and prints the metadata, not the bytes', async () => {
  // 600,000 bytes: three parts of at most 256 KB, and many more with --length.
  const bytes = largePdf(600_000)
  const { userId, names } = await submittedUser(bytes)
  const document = json(await bank('kyc', 'show', userId)).documents.find(
    (d: { name: string }) => d.name === names.front)
  const dir = emptyDir()
  for (const extra of [[], ['--length', '100000']]) {
    const file = path.join(dir, `front-${extra.length}.pdf`)
    const run = await bank('kyc', 'document', document.document_id, '--out', file, ...extra)
    const printed = json(run)
    assert.deepEqual(fs.readFileSync(file), bytes,
      `${extra.join(' ')}: the file holds the document's bytes`)
    assert.equal(printed.sha256, sha256(bytes))
    assert.equal(printed.size, bytes.length)
    assert.equal(printed.document_id, document.document_id)
    assert.equal(printed.out, file)
    for (const key of ['data', 'offset', 'next_offset']) assert.equal(key in printed, false,
      `no ${key} is printed`)
  }
  assert.deepEqual(fs.readdirSync(dir).sort(), ['front-0.pdf', 'front-2.pdf'],
    'no partial file is left behind')

  // Without --out the command prints one part as the bank answers it.
  const part = json(await bank('kyc', 'document', document.document_id, '--length', '10'))
  assert.deepEqual(Buffer.from(part.data, 'base64'), bytes.subarray(0, 10))
  assert.equal(part.next_offset, 10)
})

test('kyc cli - document --out exits 1 when the bytes do not hash to the recorded SHA-256, and writes no file', async () => {
  const { userId, names } = await submittedUser(pdf('original'))
  const document = json(await bank('kyc', 'show', userId)).documents.find(
    (d: { name: string }) => d.name === names.front)
  // The stored bytes altered behind the bank's back (same length): what --out guards against.
  const altered = pdf('ORIGINAL')
  await tb.bank.database.db.updateTable('kyc_documents').set({ content: altered } as never).where(
    'id', '=', document.document_id).execute()
  const file = path.join(emptyDir(), 'front.pdf')
  const run = await bank('kyc', 'document', document.document_id, '--out', file)
  assert.equal(run.code, 1)
  assert.match(run.stderr, new RegExp(`SHA-256 ${sha256(altered)}.*recorded.*${document.sha256}`))
  assert.equal(fs.existsSync(file), false)
  assert.deepEqual(fs.readdirSync(path.dirname(file)), [])
})

test('kyc cli - document --out of an unknown document exits 1 with the refusal; --out without a file is a usage error', async () => {
  const dir = emptyDir()
  const unknown = await bank('kyc', 'document', '00000000-0000-4000-8000-000000000000', '--out',
    path.join(dir, 'x.pdf'))
  assert.equal(unknown.code, 1)
  assert.equal(JSON.parse(unknown.stderr).error.code, 404)
  assert.deepEqual(fs.readdirSync(dir), [], 'nothing is left behind')
  const bare = await bank('kyc', 'document', '00000000-0000-4000-8000-000000000000', '--out')
  assert.equal(bare.code, 2)
  assert.match(bare.stderr, /--out needs a file name/)
  const withOffset = await bank('kyc', 'document', '00000000-0000-4000-8000-000000000000', '--out',
    'x.pdf', '--offset', '5')
  assert.equal(withOffset.code, 2)
  assert.match((await bank('help')).stdout, /bank kyc document <document_id> .*\[--out FILE\]/)
})

test('kyc cli - decide --reject --reason with a per-document decision, then audit list --subject shows who decided', async () => {
  const { userId, names } = await submittedUser()
  const missingReason = await bank('kyc', 'decide', userId, '--reject')
  assert.equal(missingReason.code, 2)
  assert.match(missingReason.stderr, /--reason is required/)

  const front = json(await bank('kyc', 'show', userId)).documents.find(
    (d: { name: string }) => d.name === names.front)
  const decisions = JSON.stringify(
    [{ document_id: front.document_id, decision: 'reject', reason: 'the photo is blurred' }])
  const decided = json(await bank('kyc', 'decide', userId, '--reject', '--reason', 'id unreadable',
    '--documents', decisions))
  assert.equal(decided.user.kyc_status, 'rejected')
  assert.equal(decided.account, null)
  const rejected = decided.documents.find((d: { document_id: string }) => d.document_id
    === front.document_id)
  assert.deepEqual([rejected.decision, rejected.rejection_reason],
    ['rejected', 'the photo is blurred'])

  const operatorId = (await tb.bank.database.db.selectFrom('credentials').select('id').where('role',
    '=', 'operator').where('label', '=', 'bootstrap').executeTakeFirstOrThrow()).id
  const audit = json(await bank('audit', 'list', '--subject', userId))
  assert.deepEqual(audit.entries.map((e: { action: string }) => e.action),
    ['kyc.rejected', 'kyc.submitted'])
  assert.equal(audit.entries[0].actor, operatorId)
  assert.equal(audit.entries[0].details.reason, 'id unreadable')
  const documentAudit = json(await bank('audit', 'list', '--subject', front.document_id))
  assert.deepEqual(documentAudit.entries.map((e: { action: string }) => e.action),
    ['document.rejected'])

  const rejectedList = json(await bank('kyc', 'list', '--state', 'rejected', '--partner',
    p.partnerId))
  assert.ok(rejectedList.applications.some((a: { user_id: string }) => a.user_id === userId))
})

test('kyc cli - decide --approve approves the user and opens the account', async () => {
  const { userId } = await submittedUser()
  const decided = json(await bank('kyc', 'decide', userId, '--approve'))
  assert.equal(decided.user.kyc_status, 'approved')
  assert.ok(decided.account?.account_id, 'the first account is opened')
  assert.ok(decided.documents.every((d: { decision: string }) => d.decision === 'approved'))
  const again = await bank('kyc', 'decide', userId, '--approve')
  assert.equal(again.code, 1)
  assert.equal(JSON.parse(again.stderr).error.code, 409)
})

test('kyb cli - list, show with the registry directors, decide --approve with per-director decisions', async () => {
  const registration = `2020${String(randomInt(1_000_000)).padStart(6, '0')}07`
  const { id: entityId } = await p.client.entities.create(
    businessEntity({ registration_number: registration }))
  const { directors } = await p.client.kyb.get({ entity_id: entityId })
  const [first, second] = directors.map((d) => d.id)
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`, {
    [`business_registration_${epoch}`]: pdf('registration'),
    [`director_id_front_${first}_${epoch}`]: png(),
    [`director_id_front_${second}_${epoch}`]: jpeg(),
  })
  await p.client.kyb.submit({
    entity_id: entityId,
    documents: [`business_registration_${epoch}`],
    directors: { [first!]: [`director_id_front_${first}_${epoch}`],
      [second!]: [`director_id_front_${second}_${epoch}`] },
  })

  const listed = json(await bank('kyb', 'list', '--partner', p.partnerId))
  const mine = listed.applications.find((a: { entity_id: string }) => a.entity_id === entityId)
  assert.deepEqual([mine?.state, mine?.documents, mine?.registration_number],
    ['submitted', 3, registration])

  const shown = json(await bank('kyb', 'show', entityId))
  assert.equal(shown.state, 'submitted')
  assert.deepEqual(shown.directors.map((d: { director_id: string }) => d.director_id),
    [first, second])
  assert.equal(shown.directors[0].documents[0].sha256, sha256(png()))
  assert.equal(shown.documents[0].name, `business_registration_${epoch}`)

  const directorDecisions = JSON.stringify([
    { director_id: first, approved: true, verified: true },
    { director_id: second, approved: true, verified: false },
  ])
  const decided = json(await bank('kyb', 'decide', entityId, '--approve', '--directors',
    directorDecisions))
  assert.equal(decided.state, 'approved')
  assert.ok(decided.account?.account_id)
  assert.deepEqual(
    decided.directors.map((d: { approved: boolean; verified: boolean }) => [d.approved,
      d.verified]),
    [[true, true], [true, false]],
  )
  const audit = json(await bank('audit', 'list', '--subject', entityId, '--limit', '1'))
  assert.deepEqual(audit.entries.map((e: { action: string }) => e.action), ['kyb.approved'])

  const notJson = await bank('kyb', 'decide', entityId, '--approve', '--directors', first!)
  assert.equal(notJson.code, 2)
  assert.match(notJson.stderr, /--directors must be JSON/)
})
