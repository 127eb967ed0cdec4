import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { rescreen_job_kind } from '../../src/screening/screening-service.ts'
import { expectRefusal } from '../support/assertions.ts'
import { businessEntity, numberedPersonalEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, secondOperator, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, transferBody } from '../transfers/helpers.ts'
import { fixture, uploadList } from './list-upload.ts'

// Customers screened against the sanctions lists through a real bank (RULINGS "Financial
// crime controls"): a listed name is held in review at onboarding (no account opens), a
// listed user of a customer with money freezes its accounts (a partner cannot lift it), an
// operator clears a false positive (two operators above the confirm score) or confirms a hit
// (the accounts stay frozen), a list load re-screens every customer, and a partner never
// sees the list's entry.

const tb = useTestBank()
let p: TestPartner
let checker: Awaited<ReturnType<typeof secondOperator>>

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  checker = await secondOperator(tb)
  await uploadList(tb, fixture('ofac-sdn.xml'))
  await uploadList(tb, fixture('un-consolidated.xml'))
})

async function reviewOf(subjectId: string) {
  const { reviews } = await tb.operator.screening.reviews({ partner_id: p.partnerId })
  const review = reviews.find((r) => r.subject_id === subjectId)
  assert.ok(review, `a review of ${subjectId}`)
  return review
}

/** An approved business entity with a funded account. */
async function customerWithMoney(name: string) {
  const { id } = await p.client.entities.create(businessEntity({ name, trading_name: name }))
  const approved = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  const account = approved.account!.account_id
  await fund(tb, account, 500_000)
  return { entityId: id, account }
}

test('customer screening - a listed business is held in review at onboarding: no account opens until two operators clear it, and the partner never sees the list entry', async () => {
  const created = await p.client.entities.create(businessEntity({
    name: 'Northern Star Petroleum', trading_name: 'Northern Star' }))
  assert.equal(created.screening_status, 'review')
  const info = await p.client.entities.info({ entity_id: created.id })
  assert.equal((info as { screening_status?: string }).screening_status, 'review')

  const refusal = await expectRefusal(tb.operator.entities.review({ entity_id: created.id,
    decision: 'approve' }), 'screening_review')
  assert.equal((refusal.details[0] as { entity_id?: string }).entity_id, created.id)
  const partnerRefusal = await expectRefusal(p.client.accounts.create({
    entity_id: created.id }), 'screening_review')
  const told = JSON.stringify(partnerRefusal)
  for (const secret of ['990003', 'ofac', 'NORTHERN STAR PETROLEUM LLC', 'score']) {
    assert.ok(!told.toLowerCase().includes(secret.toLowerCase()), `the refusal tells ${secret}`)
  }
  assert.equal((await p.client.accounts.getByEntity({ entity_id: created.id })).accounts.length,
    0)

  const review = await reviewOf(created.id)
  assert.deepEqual([review.subject, review.cause, review.status, review.hits[0]!.list_ref],
    ['entity', 'create', 'open', '990003'])
  assert.ok(review.top_score >= 0.97 && review.needs_second_operator, `${review.top_score}`)
  const asked = await tb.operator.screening.decide({ review_id: review.id, decision: 'clear',
    reason: 'Registered in Gauteng since 2004; not the listed company' })
  assert.equal(asked.status, 'clear_pending')
  await expectRefusal(tb.operator.screening.decide({ review_id: review.id, decision: 'clear',
    reason: 'again' }), 409, undefined, 'invalid_state')
  await expectRefusal(tb.operator.entities.review({ entity_id: created.id,
    decision: 'approve' }), 'screening_review')
  const cleared = await checker.client.screening.decide({ review_id: review.id,
    decision: 'clear', reason: 'Agreed: a false positive' })
  assert.deepEqual([cleared.status, cleared.decided_by], ['cleared', 'checker'])

  const approved = await tb.operator.entities.review({ entity_id: created.id,
    decision: 'approve' })
  assert.ok(approved.account, 'the first account opens once cleared')
  const events = await tb.bank.database.db.selectFrom('events').select(['type', 'data'])
    .where('resource_id', '=', created.id).where('type', '=', 'entity.screening_changed')
    .orderBy('seq').execute()
  assert.deepEqual(events.map((e) => (e.data as { status: string }).status), ['review', 'clear'],
    'the partner hears of the hold and of its end, not of the first clearing asked')
  assert.ok(!JSON.stringify(events).includes('990003'), 'never the list entry')
  const after = await p.client.entities.info({ entity_id: created.id })
  assert.equal((after as { screening_status?: string }).screening_status, 'clear')
})

test('customer screening - a name not on the lists is clear and opens no review; a clear date of birth keeps a namesake clear', async () => {
  const created = await p.client.entities.create(numberedPersonalEntity({ first_name: 'Thandiwe',
    last_name: 'Mokoena', email: 'thandiwe@example.com' }))
  assert.equal(created.screening_status, 'clear')
  const namesake = await p.client.entities.create(numberedPersonalEntity({ first_name: 'Ivan',
    last_name: 'Petrovich Zorin', date_of_birth: '1990-01-01T00:00:00Z',
    email: 'ivan@example.com' }))
  assert.equal(namesake.screening_status, 'clear', 'born 1990, not 1961: under the score')
  const { reviews } = await tb.operator.screening.reviews({ partner_id: p.partnerId })
  assert.ok(!reviews.some((r) => r.subject_id === created.id || r.subject_id === namesake.id))
})

test('customer screening - a listed user of a customer with money freezes its accounts (the partner cannot lift it); a confirmed hit keeps them frozen', async () => {
  const { entityId, account } = await customerWithMoney('Volga Timber Traders')
  const user = await p.client.users.create(userRequest(entityId, { first_name: 'Dmitri',
    last_name: 'Volkovsky', date_of_birth: '1970-03-23T00:00:00Z' }))
  assert.equal(user.screening_status, 'review')
  const status = await p.client.accounts.status({ account_id: account })
  assert.deepEqual([status.status, status.changed_by], ['frozen', 'system'])
  const payout = await expectRefusal(p.client.accounts.transfer(transferBody(account)),
    'account_not_active')
  assert.match(payout.message, /frozen/)
  await expectRefusal(p.client.accounts.unfreeze({ account_id: account, reason: 'ours' }),
    'forbidden')
  await expectRefusal(p.client.accounts.create({ entity_id: entityId }), 'screening_review')

  const review = await reviewOf(user.userId)
  assert.deepEqual([review.subject, review.entity_id], ['user', entityId])
  const confirmed = await tb.operator.screening.decide({ review_id: review.id,
    decision: 'confirm', reason: 'Passport matches the listed person' })
  assert.equal(confirmed.status, 'confirmed')
  await expectRefusal(tb.operator.screening.decide({ review_id: review.id, decision: 'clear',
    reason: 'changed my mind' }), 409, undefined, 'invalid_state')
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'frozen')
  const got = await p.client.users.get({ user_id: user.userId })
  assert.equal((got as { screening_status?: string }).screening_status, 'confirmed')
})

test('customer screening - clearing a lower-scored hit takes one operator and unfreezes what the screening froze, not what the partner froze', async () => {
  const { entityId, account } = await customerWithMoney('Cape Dune Logistics')
  const second = (await p.client.accounts.create({ entity_id: entityId })).account_id
  await p.client.accounts.freeze({ account_id: second, reason: 'Card lost' })
  const user = await p.client.users.create(userRequest(entityId, { first_name: 'Helene',
    last_name: 'Dubois', date_of_birth: '1982-06-01T00:00:00Z' }))
  assert.equal(user.screening_status, 'review')
  const review = await reviewOf(user.userId)
  assert.ok(!review.needs_second_operator, `scored ${review.top_score}`)
  const cleared = await tb.operator.screening.decide({ review_id: review.id,
    decision: 'clear', reason: 'Different person: born in Durban' })
  assert.equal(cleared.status, 'cleared')
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'active')
  const kept = await p.client.accounts.status({ account_id: second })
  assert.deepEqual([kept.status, kept.reason], ['frozen', 'Card lost'])

  const again = await p.client.users.update({ user_id: user.userId, last_name: 'Dubois' })
  assert.equal(again.screening_status, 'clear', 'a cleared hit does not come back')
})

test('customer screening - a list load re-screens every customer in the background: a customer newly listed is held', async () => {
  const person = await p.client.entities.create(numberedPersonalEntity({ first_name: 'Lerato',
    last_name: 'Nkosi-van Wyk', email: 'lerato@example.com' }))
  assert.equal(person.screening_status, 'clear')
  const listed = fixture('ofac-sdn.xml').toString('utf8').replace('12/01/2026', '12/05/2026')
    .replace('</sdnList>', `  <sdnEntry><uid>990006</uid><firstName>Lerato</firstName>
    <lastName>NKOSI-VAN WYK</lastName><sdnType>Individual</sdnType></sdnEntry>\n</sdnList>`)
  const loaded = await uploadList(tb, Buffer.from(listed))
  const job = await tb.operator.jobs.get({ job_id: loaded.rescreen_job_id! })
  assert.equal(job.kind, rescreen_job_kind)
  // Run here, or (when the bank's own runner took it first) waited for.
  await tb.bank.services.jobRunner.runById(loaded.rescreen_job_id!)
  let ran = await tb.operator.jobs.get({ job_id: loaded.rescreen_job_id! })
  while (ran.state === 'queued' || ran.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 20))
    ran = await tb.operator.jobs.get({ job_id: loaded.rescreen_job_id! })
  }
  assert.equal(ran.state, 'done')
  const result = ran.result as { customers_screened?: number; reviews_opened?: number }
  assert.ok(Number(result.customers_screened) >= 5, JSON.stringify(result))
  assert.ok(Number(result.reviews_opened) >= 1, JSON.stringify(result))
  const review = await reviewOf(person.id)
  assert.deepEqual([review.cause, review.status], ['rescreen', 'open'])
  const info = await p.client.entities.info({ entity_id: person.id })
  assert.equal((info as { screening_status?: string }).screening_status, 'review')
})

test('customer screening - metrics: screenings timed, reviews undecided and the age of the oldest', async () => {
  const registry = tb.bank.services.metrics.registry
  const values = async (name: string) => (await registry.getSingleMetric(name)!.get()).values
  const count = (await values('bank_screening_seconds'))
    .find((v) => (v as { metricName?: string }).metricName === 'bank_screening_seconds_count')
  assert.ok(Number(count?.value) >= 5, 'every screening is timed')
  const { reviews } = await tb.operator.screening.reviews({ limit: 500 })
  const undecided = reviews.filter((r) => r.status === 'open' || r.status === 'clear_pending')
  assert.ok(undecided.length > 0)
  assert.equal((await values('bank_screening_reviews_undecided'))[0]?.value, undecided.length)
  tb.clock.advance(60_000)
  assert.ok(Number((await values('bank_screening_oldest_undecided_review_age_seconds'))[0]
    ?.value) >= 60)
})

test('customer screening - bad decisions are refused and change nothing; another partner cannot see a review', async () => {
  await expectRefusal(tb.operator.screening.decide({ review_id: crypto.randomUUID(),
    decision: 'clear', reason: 'x' }), 'not_found')
  await expectRefusal(tb.operator.screening.decide({ review_id: 'nope', decision: 'clear',
    reason: 'x' } as never), 'invalid_request')
  const { reviews } = await tb.operator.screening.reviews({ status: 'open' })
  const one = reviews[0]!
  await expectRefusal(tb.operator.screening.decide({ review_id: one.id, decision: 'maybe',
    reason: 'x' } as never), 'invalid_request')
  assert.equal((await tb.operator.screening.review({ review_id: one.id })).status, 'open')
  const other = await onboardPartner(tb, { approve: true })
  await expectRefusal(other.client.entities.info({ entity_id: one.entity_id }), 'not_found')
})
