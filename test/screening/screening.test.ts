import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { rescreen_job_kind } from '../../src/screening/screening-service.ts'
import { expectRefusal } from '../support/assertions.ts'
import { useTestBank } from '../support/harness.ts'
import { fixture, fixturePath, sha, uploadList } from './list-upload.ts'
import { bankEnv, emptyDir, json, removeTempDirs, runBank } from '../cli/run-bank.ts'

// Sanctions screening through a real bank: list files uploaded part by part
// (`ops.screening.upload`, what `bank screening load <file>` sends), each load a version that
// replaces its list's active one in one go, a re-screening job per load, names screened by
// hand (`ops.screening.check`), and the refusals of bad input, which change nothing.

const tb = useTestBank()

before(async () => {
  await tb.ready
})

after(() => removeTempDirs())

const upload = (bytes: Buffer, parts = 3) => uploadList(tb, bytes, parts)

/** A copy of OFAC's fixture with another Publish_Date and one more individual. */
function ofacVersion2(): Buffer {
  return Buffer.from(fixture('ofac-sdn.xml').toString('utf8')
    .replace('12/01/2026', '12/04/2026')
    .replace('</sdnList>', `  <sdnEntry><uid>990006</uid><firstName>Lerato</firstName>
    <lastName>NKOSI-VAN WYK</lastName><sdnType>Individual</sdnType></sdnEntry>\n</sdnList>`))
}

let unLoad: string

test('screening - the UN list uploaded in parts loads as the active version with its own date, and enqueues the re-screening of every customer', async () => {
  const reply = await upload(fixture('un-consolidated.xml'))
  const load = reply.load!
  unLoad = load.id
  assert.equal(load.source, 'un_consolidated')
  assert.equal(load.list_date, '2026-11-30T08:15:02.117Z')
  assert.equal(load.entry_count, 5)
  assert.equal(load.active, true)
  assert.equal(load.sha256, sha(fixture('un-consolidated.xml')))
  assert.ok(load.loaded_by.length > 0)
  const job = await tb.operator.jobs.get({ job_id: reply.rescreen_job_id! })
  assert.equal(job.kind, rescreen_job_kind)
  const hits = (await tb.operator.screening.check({ name: 'Zorin Ivan' })).hits
  assert.equal(hits[0]!.list_ref, 'FXi.001')
  assert.equal(hits[0]!.source, 'un_consolidated')
  assert.equal(hits[0]!.load_id, load.id)
})

test('screening - the last part sent again, or twice at once, answers the same load; no second version is made', async () => {
  const bytes = fixture('un-consolidated.xml')
  const reply = await upload(bytes, 1)
  const again = await tb.operator.screening.upload({ upload_id: reply.upload_id, part: 0,
    parts: 1, sha256: sha(bytes), data: bytes.toString('base64') })
  assert.equal(again.status, 'loaded')
  assert.equal(again.load!.id, reply.load!.id)
  // The last part of a new upload sent twice at once: one load, answered to both.
  const upload_id = randomUUID()
  const last = { upload_id, part: 0, parts: 1, sha256: sha(bytes), data: bytes.toString('base64') }
  const [a, b] = await Promise.all([tb.operator.screening.upload(last),
    tb.operator.screening.upload(last)])
  assert.deepEqual([a.status, b.status], ['loaded', 'loaded'])
  assert.equal(a.load!.id, b.load!.id)
  unLoad = a.load!.id
  const { loads } = await tb.operator.screening.lists({})
  assert.equal(loads.filter((l) => l.id === reply.load!.id).length, 1)
  assert.equal(loads.filter((l) => l.id === a.load!.id).length, 1)
  assert.deepEqual(loads.filter((l) => l.active && l.source === 'un_consolidated')
    .map((l) => l.id), [a.load!.id])
})

test('screening - a new load of a list replaces its active version at once; the other list is untouched; lists shows every version newest first', async () => {
  const first = (await upload(fixture('ofac-sdn.xml'))).load!
  assert.deepEqual([first.source, first.list_date, first.entry_count],
    ['ofac_sdn', '2026-12-01', 5])
  assert.deepEqual((await tb.operator.screening.check({ name: 'Lerato Nkosi-van Wyk' })).hits, [])
  const second = (await upload(ofacVersion2(), 2)).load!
  assert.deepEqual([second.list_date, second.entry_count, second.active], ['2026-12-04', 6, true])
  const { loads, review_score, confirm_score } = await tb.operator.screening.lists({})
  assert.equal(review_score, 0.88)
  assert.equal(confirm_score, 0.97)
  assert.equal(loads[0]!.id, second.id)
  const old = loads.find((l) => l.id === first.id)!
  assert.equal(old.active, false)
  assert.ok(old.replaced_at)
  assert.deepEqual(loads.filter((l) => l.active).map((l) => l.id).sort(),
    [second.id, unLoad].sort())
  // The very name screened before the load: its answer then (no hit) is not remembered
  // past the load.
  const checked = await tb.operator.screening.check({ name: 'Lerato Nkosi-van Wyk' })
  assert.equal(checked.hits[0]!.list_ref, '990006')
  assert.equal(checked.hits[0]!.load_id, second.id)
  assert.deepEqual(checked.lists.map((l) => l.source).sort(), ['ofac_sdn', 'un_consolidated'])
  // The UN list's entries are still screened.
  assert.equal((await tb.operator.screening.check({ name: 'Abu Yusuf' })).hits[0]!.list_ref,
    'FXi.002')
})

test('screening - check: kind, date of birth, ID number and threshold as given; no hit for another name', async () => {
  const entity = await tb.operator.screening.check({ name: 'Northern Star Petroleum Ltd',
    kind: 'entity' })
  assert.equal(entity.hits[0]!.list_ref, '990003')
  assert.equal(entity.hits[0]!.kind, 'entity')
  const dob = await tb.operator.screening.check({ name: 'Dmitri Volkovsky',
    date_of_birth: '1970-03-23', id_number: '7201558812' })
  assert.deepEqual([dob.hits[0]!.date_of_birth, dob.hits[0]!.id_number], ['match', 'match'])
  const wrongDob = await tb.operator.screening.check({ name: 'Dmitri Volkovsky',
    date_of_birth: '1999-01-01' })
  assert.deepEqual(wrongDob.hits, [])
  const low = await tb.operator.screening.check({ name: 'Dmitri Volkovsky',
    date_of_birth: '1999-01-01', threshold: 0.5 })
  assert.equal(low.threshold, 0.5)
  assert.equal(low.hits[0]!.date_of_birth, 'mismatch')
  assert.deepEqual((await tb.operator.screening.check({ name: 'Thabo Mokoena' })).hits, [])
})

test('screening - the service screens as the check does (what onboarding and payments will call)', async () => {
  const hits = await tb.bank.services.screening.screen({ name: 'José María Núñez García',
    kind: 'individual' })
  assert.equal(hits[0]!.list_ref, 'FXi.003')
  assert.equal(hits[0]!.score, 1)
})

test('screening - bad input to the operations is a 4xx and changes nothing', async () => {
  const before_ = (await tb.operator.screening.lists({ limit: 500 })).loads.length
  const bytes = fixture('un-consolidated.xml')
  const base = { upload_id: randomUUID(), part: 0, parts: 1, sha256: sha(bytes),
    data: bytes.toString('base64') }
  const up = tb.operator.screening.upload
  await expectRefusal(up({ ...base, sha256: 'abc' }), 400, 'sha256')
  await expectRefusal(up({ ...base, data: '***' }), 400, 'data')
  await expectRefusal(up({ ...base, part: 1 }), 400, 'part')
  await expectRefusal(up({ ...base, upload_id: 'nope' }), 400, 'upload_id')
  await expectRefusal(up({ ...base, parts: 0 }), 400, 'parts')
  await expectRefusal(up({ ...base, extra: 1 } as typeof base), 400)
  // The bytes are not the file the SHA-256 names.
  await expectRefusal(up({ ...base, sha256: sha(Buffer.from('other')) }), 400, 'sha256')
  // Not a list the bank reads, and not XML at all.
  const notList = Buffer.from('<Document><x/></Document>')
  await expectRefusal(up({ ...base, upload_id: randomUUID(), sha256: sha(notList),
    data: notList.toString('base64') }), 422, 'data')
  const binary = Buffer.from([0xff, 0xfe, 0x00, 0x41])
  await expectRefusal(up({ ...base, upload_id: randomUUID(), sha256: sha(binary),
    data: binary.toString('base64') }), 422, 'data')
  // A part that says another file than the upload's first part.
  const upload_id = randomUUID()
  await up({ ...base, upload_id, parts: 2, data: bytes.subarray(0, 10).toString('base64') })
  await expectRefusal(up({ ...base, upload_id, part: 1, parts: 3,
    data: bytes.subarray(10).toString('base64') }), 409)
  const check = tb.operator.screening.check
  await expectRefusal(check({ name: '' }), 400, 'name')
  await expectRefusal(check({ name: 'x'.repeat(301) }), 400, 'name')
  await expectRefusal(check({ name: 'A B', date_of_birth: '1970-02-30' }), 400, 'date_of_birth')
  await expectRefusal(check({ name: 'A B', threshold: 1.5 }), 400, 'threshold')
  await expectRefusal(check({ name: 'A B', kind: 'vessel' as 'entity' }), 400, 'kind')
  await expectRefusal(tb.operator.screening.lists({ limit: 0 }), 400, 'limit')
  assert.equal((await tb.operator.screening.lists({ limit: 500 })).loads.length, before_)
})

test('screening - bank screening load <file> sends the file in parts and prints the load', async () => {
  const env = bankEnv(tb)
  const run = await runBank(['screening', 'load', fixturePath('ofac-sdn.xml')], env)
  assert.equal(run.code, 0, run.stderr)
  const printed = json(run)
  assert.equal(printed.load.source, 'ofac_sdn')
  assert.equal(printed.load.entry_count, 5)
  assert.equal(printed.load.active, true)
  assert.equal(typeof printed.rescreen_job_id, 'string')
  const listed = json(await runBank(['screening', 'lists'], env))
  assert.equal(listed.loads[0].id, printed.load.id)
  const checked = json(await runBank(['screening', 'check', 'Volkovsky Dmitri'], env))
  assert.equal(checked.hits[0].list_ref, '990001')
  const empty = path.join(emptyDir(), 'empty.xml')
  fs.writeFileSync(empty, '')
  const refused = await runBank(['screening', 'load', empty], env)
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, /is empty/)
  const missing = await runBank(['screening', 'load', '/nonexistent/list.xml'], env)
  assert.equal(missing.code, 2)
  const notList = path.join(emptyDir(), 'other.xml')
  fs.writeFileSync(notList, '<Document/>')
  const bad = await runBank(['screening', 'load', notList], env)
  assert.equal(bad.code, 1)
  assert.match(bad.stderr, /unprocessable/)
})
