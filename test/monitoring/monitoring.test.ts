import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { before, test } from 'node:test'
import { OperatorClient } from '../../src/client/index.ts'
import { onboardPartner, useTestBank, type TestPartner, secondOperator } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'
import { numberedPersonalEntity } from '../support/fixtures.ts'
import { validateAgainstXsd } from '../support/xsd.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'
import { day_ms, fund, transferBody } from '../transfers/helpers.ts'

// Transaction monitoring (RULINGS "Financial crime controls"): each rule's triggering
// example, none for ordinary traffic, alerts grouped into one case per customer and never
// opened twice for a movement, the decisions on a case, maker-checker on filing a report, and
// the report valid against the goAML schema.

const goamlXsd = fileURLToPath(new URL('../fixtures/goaml/goAMLSchema.xsd', import.meta.url))
const tb = useTestBank({ env: { BANK_GOAML_RENTITY_ID: '4242', BANK_GOAML_REPORTING_USER: 'MLRO01',
  BANK_GOAML_LOCATION: '1 Bank Street, Johannesburg' } })
let p: TestPartner
let maker: string
let checker: OperatorClient

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  maker = await operatorCredentialId(tb)
  checker = (await secondOperator(tb)).client
})

/** A new approved personal customer with an account, funded with `rands`. */
async function customer(rands = 0): Promise<{ entityId: string; accountId: string }> {
  const entity = await p.client.entities.create(numberedPersonalEntity())
  await tb.operator.entities.review({ entity_id: entity.id, decision: 'approve' })
  const account = await p.client.accounts.create({ entity_id: entity.id })
  if (rands > 0) await fund(tb, account.account_id, rands * 100)
  return { entityId: entity.id, accountId: account.account_id }
}

async function pay(accountId: string, rands: number, overrides: Record<string, unknown> = {}) {
  const reply = await p.client.accounts.transfer(transferBody(accountId,
    { amount: rands * 100, ...overrides }))
  return reply.tx_id
}

async function casesOf(entityId: string) {
  return (await tb.operator.monitoring.cases({ partner_id: p.partnerId, limit: 500 })).cases
    .filter((c) => c.entity_id === entityId)
}

async function alertsOf(entityId: string) {
  return (await tb.operator.monitoring.alerts({ partner_id: p.partnerId, limit: 500 })).alerts
    .filter((a) => a.entity_id === entityId)
}

async function withParams(rule: 'velocity', params: Record<string, number>,
    run: () => Promise<void>): Promise<void> {
  const before = (await tb.operator.monitoring.rules({})).rules.find((r) => r.rule === rule)!
  await tb.operator.monitoring.setRule({ rule, params })
  try {
    await run()
  } finally {
    await tb.operator.monitoring.setRule({ rule, params: before.params })
  }
}

test('monitoring - ten payments just under R5,000 in an hour open exactly one structuring alert and one case; evaluating again opens nothing', async () => {
  const c = await customer(100_000)
  const txIds: string[] = []
  for (let i = 0; i < 10; i++) {
    txIds.push(await pay(c.accountId, 4_600 + i * 10))
    tb.clock.advance(5 * 60_000)
  }
  // (The `monitoring.sweep` job may have evaluated some already, as the clock moved.)
  await tb.operator.monitoring.run({})
  const alerts = await alertsOf(c.entityId)
  assert.equal(alerts.length, 1)
  assert.equal(alerts[0]!.rule, 'structuring')
  assert.equal(alerts[0]!.status, 'open')
  assert.deepEqual([...alerts[0]!.tx_ids].sort(), [...txIds].sort())
  assert.equal(alerts[0]!.params.threshold_cents, 500_000)
  assert.match(alerts[0]!.detail, /10 payments out/)
  const cases = await casesOf(c.entityId)
  assert.equal(cases.length, 1)
  assert.deepEqual([cases[0]!.status, cases[0]!.alerts, cases[0]!.alerts_open, cases[0]!.rules],
    ['open', 1, 1, ['structuring']])
  // Nothing is evaluated twice, even when the sweep reads the ledger from the start again.
  await tb.bank.database.db.updateTable('monitoring_cursor').set({ postings_id: '0' }).execute()
  const again = await tb.operator.monitoring.run({})
  assert.deepEqual([again.alerts_opened, again.alerts_joined], [0, 0])
  assert.equal((await alertsOf(c.entityId)).length, 1)
  // An eleventh within the window joins the same alert; it also takes the hour's payments over
  // R50,000 (velocity), a second alert in the same case.
  const eleventh = await pay(c.accountId, 4_700)
  await tb.operator.monitoring.run({})
  const after = await alertsOf(c.entityId)
  assert.deepEqual(after.map((a) => a.rule).sort(), ['structuring', 'velocity'])
  const structuring = after.find((a) => a.rule === 'structuring')!
  assert.equal(structuring.alert_id, alerts[0]!.alert_id)
  assert.ok(structuring.tx_ids.includes(eleventh))
  const [one, ...none] = await casesOf(c.entityId)
  assert.deepEqual([one!.alerts, none], [2, []])
})

test('monitoring - ordinary traffic opens no alert', async () => {
  const c = await customer(20_000)
  for (const rands of [350, 1_200, 80]) {
    await pay(c.accountId, rands)
    tb.clock.advance(20 * 60_000)
  }
  await fund(tb, c.accountId, 150_000)
  await tb.operator.monitoring.run({})
  assert.deepEqual(await alertsOf(c.entityId), [])
  assert.deepEqual(await casesOf(c.entityId), [])
})

test('monitoring - velocity: more payments in an hour than the rule allows', async () => {
  await withParams('velocity', { count_per_hour: 3 }, async () => {
    const c = await customer(10_000)
    for (let i = 0; i < 4; i++) await pay(c.accountId, 100)
    await tb.operator.monitoring.run({})
    const alerts = await alertsOf(c.entityId)
    assert.deepEqual(alerts.map((a) => a.rule), ['velocity'])
    assert.equal(alerts[0]!.tx_ids.length, 4)
    assert.match(alerts[0]!.detail, /4 payments out .* in the last hour/)
  })
})

test('monitoring - rapid in-and-out: most of a large credit paid out again within hours', async () => {
  const c = await customer(20_000)
  tb.clock.advance(60 * 60_000)
  const out = await pay(c.accountId, 18_000)
  await tb.operator.monitoring.run({})
  const alerts = await alertsOf(c.entityId)
  assert.deepEqual(alerts.map((a) => a.rule), ['rapid_in_out'])
  assert.ok(alerts[0]!.tx_ids.includes(out))
  assert.equal(alerts[0]!.tx_ids.length, 2, 'the deposit and the payout')
})

test('monitoring - new payee with a large amount: once per new recipient', async () => {
  const c = await customer(200_000)
  const first = await pay(c.accountId, 30_000, { account_number: '62000000777' })
  tb.clock.advance(2 * 60 * 60_000)
  await pay(c.accountId, 30_000, { account_number: '62000000777' })
  await tb.operator.monitoring.run({})
  const alerts = await alertsOf(c.entityId)
  assert.deepEqual(alerts.map((a) => a.rule), ['new_payee_large'])
  assert.deepEqual(alerts[0]!.tx_ids, [first])
})

test('monitoring - decisions: assign, note, escalate, close as false positive; a later hit opens a new case', async () => {
  await withParams('velocity', { count_per_hour: 1 }, async () => {
    const c = await customer(5_000)
    await pay(c.accountId, 100)
    await pay(c.accountId, 100)
    await tb.operator.monitoring.run({})
    const [open] = await casesOf(c.entityId)
    assert.ok(open)
    await expectApiError(tb.operator.monitoring.assign({ case_id: open.case_id,
      assignee: p.credentialId }), 400, 'assignee')
    const assigned = await tb.operator.monitoring.assign({ case_id: open.case_id,
      assignee: maker })
    assert.equal(assigned.assigned_to, maker)
    const note = await tb.operator.monitoring.note({ case_id: open.case_id,
      text: 'Called the customer: payroll run.' })
    assert.equal(note.author, maker)
    const escalated = await tb.operator.monitoring.decide({ case_id: open.case_id,
      decision: 'escalate', reason: 'Second look' })
    assert.deepEqual([escalated.case.status, escalated.approval_id], ['escalated', null])
    await expectApiError(tb.operator.monitoring.decide({ case_id: open.case_id,
      decision: 'escalate', reason: 'again' }), 409)
    const closed = await tb.operator.monitoring.decide({ case_id: open.case_id,
      decision: 'false_positive', reason: 'Payroll' })
    assert.deepEqual([closed.case.status, closed.case.decision, closed.case.alerts_open],
      ['closed', 'false_positive', 0])
    await expectApiError(tb.operator.monitoring.note({ case_id: open.case_id, text: 'late' })
      .then(() => tb.operator.monitoring.assign({ case_id: open.case_id, assignee: maker })), 409)
    const detail = await tb.operator.monitoring.case({ case_id: open.case_id })
    assert.deepEqual(detail.notes.map((n) => n.text), ['Called the customer: payroll run.', 'late'])
    assert.equal(detail.customer.entity_id, c.entityId)
    assert.equal(detail.recent_money.length, 3, 'the deposit and the two payments')
    assert.deepEqual(detail.alert_money.map((m) => m.debit), ['10000', '10000'],
      'the two payments the alert holds')
    assert.ok(detail.alerts.every((a) => a.status === 'closed'))
    await pay(c.accountId, 100)
    await tb.operator.monitoring.run({})
    const cases = await casesOf(c.entityId)
    assert.deepEqual(cases.map((k) => k.status), ['open', 'closed'])
    const queue = (await tb.operator.monitoring.cases({ partner_id: p.partnerId,
      oldest_first: true, limit: 500 })).cases.filter((k) => k.entity_id === c.entityId)
    assert.deepEqual(queue.map((k) => k.status), ['closed', 'open'], 'a queue: oldest first')
    const trail = (await tb.operator.audit.list({ target: open.case_id })).entries
      .map((e) => e.action)
    assert.ok(trail.includes('monitoring.case.decide'))
    assert.ok(trail.includes('monitoring.case.assign'))
  })
})

test('monitoring - filing a report needs a second operator; the goAML report is schema-valid and listed with its reference', async () => {
  const c = await customer(100_000)
  for (let i = 0; i < 10; i++) await pay(c.accountId, 4_900, { ref: `Part ${i} & more` })
  await tb.operator.monitoring.run({})
  const [open] = await casesOf(c.entityId)
  assert.ok(open)
  const asked = await tb.operator.monitoring.decide({ case_id: open.case_id,
    decision: 'report', reason: 'Ten payments just under R5,000 within minutes' })
  assert.equal(asked.case.status, 'report_pending')
  assert.ok(asked.approval_id)
  await expectApiError(tb.operator.monitoring.decide({ case_id: open.case_id,
    decision: 'report', reason: 'again' }), 409)
  await expectApiError(tb.operator.approvals.approve({ approval_id: asked.approval_id }), 403)
  assert.equal((await tb.operator.monitoring.reports({ partner_id: p.partnerId })).reports
    .filter((r) => r.case_id === open.case_id).length, 0, 'nothing filed by the maker alone')
  const approved = await checker.approvals.approve({ approval_id: asked.approval_id })
  assert.deepEqual([approved.state, approved.kind], ['approved', 'str_filing'])
  const [report] = (await tb.operator.monitoring.reports({ partner_id: p.partnerId })).reports
    .filter((r) => r.case_id === open.case_id)
  assert.ok(report)
  assert.match(report.reference, /^STR-\d{8}-\d{6}$/)
  assert.equal(report.requested_by, maker)
  assert.equal(report.approved_by, approved.decided_by)
  const { xml } = await tb.operator.monitoring.report({ report_id: report.report_id })
  assert.deepEqual(await validateAgainstXsd(xml, goamlXsd), [])
  assert.match(xml, /<report_code>STR<\/report_code>/)
  assert.match(xml, new RegExp(`<entity_reference>${report.reference}</entity_reference>`))
  assert.equal(xml.match(/<transaction>/g)?.length, 10)
  assert.match(xml, /<rentity_id>4242<\/rentity_id>/)
  const after = await tb.operator.monitoring.case({ case_id: open.case_id })
  assert.equal(after.case.status, 'reported')
  assert.deepEqual(after.reports.map((r) => r.reference), [report.reference])
  assert.ok(after.alerts.every((a) => a.status === 'closed'))
  await expectApiError(tb.operator.monitoring.decide({ case_id: open.case_id,
    decision: 'false_positive', reason: 'late' }), 409)
})

test('monitoring - the rules are stored and set by operators; bad input is refused and changes nothing', async () => {
  const { rules } = await tb.operator.monitoring.rules({})
  assert.deepEqual(rules.map((r) => r.rule).sort(), ['dormant_active', 'new_payee_large',
    'rapid_in_out', 'structuring', 'velocity'])
  const set = await tb.operator.monitoring.setRule({ rule: 'structuring',
    params: { count: 12 } })
  assert.deepEqual([set.params.count, set.params.threshold_cents, set.updated_by],
    [12, 500_000, maker])
  await tb.operator.monitoring.setRule({ rule: 'structuring', params: { count: 10 } })
  await expectApiError(tb.operator.monitoring.setRule({ rule: 'structuring',
    params: { band_pct: 150 } }), 400, 'params.band_pct')
  await expectApiError(tb.operator.monitoring.setRule({ rule: 'structuring',
    params: { colour: 1 } }), 400)
  await expectApiError(tb.operator.monitoring.setRule({ rule: 'nonsense' as 'velocity' }), 400)
  assert.equal((await tb.operator.monitoring.rules({})).rules.find((r) => r.rule ===
    'structuring')!.params.band_pct, 90)
  await expectApiError(tb.operator.monitoring.case({ case_id: 'not-a-uuid' }), 400, 'case_id')
  await expectApiError(tb.operator.monitoring.case({
    case_id: '00000000-0000-4000-8000-000000000000' }), 404)
  await expectApiError(tb.operator.monitoring.decide({
    case_id: '00000000-0000-4000-8000-000000000000', decision: 'maybe' as 'escalate',
    reason: 'x' }), 400, 'decision')
  await expectApiError(tb.operator.monitoring.alerts({ limit: 0 }), 400, 'limit')
  await expectApiError(tb.operator.monitoring.report({
    report_id: '00000000-0000-4000-8000-000000000000' }), 404)
})

test('monitoring - alerts and cases are opened and aged on the bank\'s clock, also for a sandbox partner whose clock is ahead', async () => {
  const ahead = await onboardPartner(tb, { approve: true })
  await ahead.client.sandbox.advance({ seconds: 2 * day_ms / 1000 })
  const entity = await ahead.client.entities.create(numberedPersonalEntity())
  await tb.operator.entities.review({ entity_id: entity.id, decision: 'approve' })
  const { account_id } = await ahead.client.accounts.create({ entity_id: entity.id })
  await fund(tb, account_id, 5_000_000)
  const { tx_id } = await ahead.client.accounts.transfer(transferBody(account_id,
    { amount: 3_000_000, account_number: '62000000888' }))
  const stamped = (await ahead.client.accounts.getTransaction({ tx_id })).transaction.date
  assert.ok(new Date(stamped).getTime() >= tb.clock.now().getTime() + 2 * day_ms,
    'the payment is stamped on the partner\'s clock')
  await tb.operator.monitoring.run({})
  const opened = tb.clock.now().toISOString()
  const listed = async (older_than_hours: number) => (await tb.operator.monitoring.alerts({
    partner_id: ahead.partnerId, older_than_hours })).alerts
  const [alert] = await listed(0)
  assert.equal(alert?.rule, 'new_payee_large')
  assert.equal(new Date(alert.opened_at).toISOString(), opened)
  const [kase] = (await tb.operator.monitoring.cases({ partner_id: ahead.partnerId })).cases
  assert.equal(new Date(kase!.opened_at).toISOString(), opened)
  assert.deepEqual(await listed(1), [], 'an hour old only an hour later, on the bank\'s clock')
  tb.clock.advance(60 * 60_000)
  assert.equal((await listed(1)).length, 1)
})

test('monitoring - metrics: alerts open and the age of the oldest', async () => {
  const registry = tb.bank.services.metrics.registry
  const value = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values[0]?.value
  const open = (await tb.operator.monitoring.alerts({ status: 'open', limit: 500 })).alerts
  assert.equal(await value('bank_monitoring_alerts_open'), open.length)
  assert.ok(open.length > 0)
  tb.clock.advance(60_000)
  assert.ok((await value('bank_monitoring_oldest_open_alert_age_seconds'))! >= 60)
})

// Last: it moves the bank's clock by months.
test('monitoring - a dormant account suddenly active', async () => {
  const c = await customer(5_000)
  await tb.operator.monitoring.run({})
  tb.clock.advance(200 * day_ms)
  const woke = await fund(tb, c.accountId, 200_000, 'back again')
  await tb.operator.monitoring.run({})
  const alerts = await alertsOf(c.entityId)
  assert.deepEqual(alerts.map((a) => a.rule), ['dormant_active'])
  assert.deepEqual(alerts[0]!.tx_ids, [woke])
  assert.match(alerts[0]!.detail, /after 200 days without a movement/)
})
