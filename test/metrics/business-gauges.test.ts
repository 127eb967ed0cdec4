import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { freePort } from '../../dev/nats-server.ts'
import { createLogger } from '../../src/logger.ts'
import { BankMetrics, serveMetrics } from '../../src/metrics/bank-metrics.ts'
import type { Database } from '../../src/schema.ts'
import { SummaryService } from '../../src/summary/summary-service.ts'
import { SouthAfricanCalendar } from '../../src/calendar/sa-calendar.ts'
import { ManualClock } from '../../src/clock.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { transferBody } from '../transfers/helpers.ts'
import {
  appendCommitted,
  deliverDue,
  partnerEvent,
  partnerWithReceiver,
  resourceId,
  type Receiver,
  type WebhookPartner,
} from '../webhooks/helpers.ts'
import { parsePrometheusText, type Family } from './prometheus-text.ts'

// The business gauges of /metrics (src/metrics/business-gauges.ts), read from the summary's
// aggregates when scraped: money held, pending EFTs and the oldest's age, the last clearing
// cycle's outcomes, the last ledger verify and its age, the review queues and each partner's
// webhook failure rate. Scraped over real HTTP after real requests. Last, a metrics server
// whose database does not answer still serves its process metrics, the business ones absent.

const threshold = 100_000
const tb = useTestBank({ env: { BANK_METRICS_PORT: '0', BANK_DUAL_CONTROL_CENTS:
  String(threshold) } })
let p: TestPartner
let accountId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  accountId = accounts[0]!.account_id
  await tb.operator.accounts.deposit({ account_id: accountId, amount: threshold })
})

async function scrape(port = tb.bank.metricsPort): Promise<Map<string, Family>> {
  assert.ok(port, 'the bank serves metrics when BANK_METRICS_PORT is set')
  const response = await fetch(`http://127.0.0.1:${port}/metrics`)
  assert.equal(response.status, 200)
  return parsePrometheusText(await response.text())
}

/** The family's one sample with these labels (undefined when it has none). */
function value(families: Map<string, Family>, name: string,
    labels: Record<string, string> = {}): number | undefined {
  const family = families.get(name)
  assert.equal(family?.type, 'gauge', `${name} is a gauge`)
  return family.samples.find((s) => Object.entries(labels).every(
    ([k, v]) => s.labels[k] === v))?.value
}

test('business gauges - before any verify or clearing: up, queues empty, verify age infinite', async () => {
  const f = await scrape()
  assert.equal(value(f, 'bank_business_metrics_up'), 1)
  assert.equal(value(f, 'bank_ledger_verify_ok'), undefined, 'no verify has run')
  assert.equal(value(f, 'bank_ledger_verify_age_seconds'), Infinity)
  assert.equal(value(f, 'bank_clearing_last_cycle_age_seconds'), undefined, 'no cycle has ended')
  for (const queue of ['kyc', 'kyb', 'approvals']) {
    assert.equal(value(f, 'bank_review_queue', { queue }), 0, queue)
    assert.equal(value(f, 'bank_review_queue_oldest_age_seconds', { queue }), 0, queue)
  }
  assert.equal(value(f, 'bank_pending_eft_count'), 0)
  assert.equal(value(f, 'bank_pending_eft_oldest_age_seconds'), 0)
})

test('business gauges - a pending EFT: its count, amount, hold and age on the bank clock', async () => {
  await p.client.accounts.transfer(transferBody(accountId, { amount: 1_234 }))
  tb.clock.advance(120_000)
  const f = await scrape()
  assert.equal(value(f, 'bank_pending_eft_count'), 1)
  assert.equal(value(f, 'bank_pending_eft_amount_cents'), 1_234)
  assert.ok(value(f, 'bank_money_held_cents')! >= 1_234, 'the payout is held')
  const age = value(f, 'bank_pending_eft_oldest_age_seconds')!
  assert.ok(age >= 120 && age < 600, `the oldest waited two minutes of bank time (${age})`)
})

test('business gauges - a deposit above the dual-control threshold waits in the approvals queue', async () => {
  const waiting = await tb.operator.accounts.deposit({ account_id: accountId,
    amount: threshold + 1 })
  assert.equal(waiting.status, 'pending_approval')
  tb.clock.advance(60_000)
  const f = await scrape()
  assert.equal(value(f, 'bank_review_queue', { queue: 'approvals' }), 1)
  assert.ok(value(f, 'bank_review_queue_oldest_age_seconds', { queue: 'approvals' })! >= 60)
})

test('business gauges - a ledger verify and a clearing cycle: verify ok and fresh, cycle settled', async () => {
  await tb.operator.ledger.verify({})
  await tb.operator.clearing.run()
  const f = await scrape()
  assert.equal(value(f, 'bank_ledger_verify_ok'), 1)
  assert.equal(value(f, 'bank_ledger_verify_problems'), 0)
  assert.ok(value(f, 'bank_ledger_verify_age_seconds')! < 60)
  assert.equal(value(f, 'bank_clearing_last_cycle_payments', { outcome: 'settled' }), 1)
  assert.equal(value(f, 'bank_clearing_last_cycle_payments', { outcome: 'failed' }), 0)
  assert.ok(value(f, 'bank_clearing_last_cycle_age_seconds')! >= 0)
  assert.equal(value(f, 'bank_pending_eft_count'), 0, 'the cycle took the pending EFT')
})

test('business gauges - the webhook failure rate by partner, over its newest deliveries', async () => {
  const receivers: Receiver[] = []
  try {
    await tb.bank.services.jobRunner.stop()
    const failing = await partnerWithReceiver(tb, { endpoint: true })
    const healthy = await partnerWithReceiver(tb, { endpoint: true })
    receivers.push(failing.receiver, healthy.receiver)
    failing.receiver.respond = () => 500
    await appendCommitted(tb, [partnerEvent(tb, failing.partner.partnerId, resourceId())])
    await appendCommitted(tb, [partnerEvent(tb, healthy.partner.partnerId, resourceId())])
    await deliverDue(tb)
    await failUntilGivenUp(failing.partner)
    const f = await scrape()
    assert.equal(value(f, 'bank_webhook_failure_rate', { partner_id: failing.partner.partnerId }),
      1)
    assert.equal(value(f, 'bank_webhook_failure_rate', { partner_id: healthy.partner.partnerId }),
      0)
  } finally {
    await Promise.all(receivers.map((r) => r.close()))
    tb.bank.services.jobRunner.start()
  }
})

/** Moves the bank clock to each retry of the partner's delivery until it is failed. */
async function failUntilGivenUp(partner: WebhookPartner): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const { deliveries } = await tb.operator.webhooks.deliveries({
      partner_id: partner.partnerId, state: 'pending' })
    if (deliveries.length === 0) return
    const next = Math.min(...deliveries.map((d) => Date.parse(d.next_attempt_at!)))
    if (next > tb.clock.now().getTime()) tb.clock.set(new Date(next))
    await deliverDue(tb)
  }
  assert.fail('the delivery was still pending after 100 rounds')
}

describe_database_away()

/** A metrics server whose database refuses connections: 200, process figures, no business ones. */
function describe_database_away() {
  let db: Kysely<Database> | undefined
  let server: { port: number; close(): Promise<void> } | undefined

  after(async () => {
    await server?.close()
    await db?.destroy()
  })

  test('business gauges - with the database away the scrape still answers: process metrics, business ones absent', async () => {
    // A PostgreSQL that is not there: a free port nothing listens on.
    const pool = new pg.Pool({ host: '127.0.0.1', port: await freePort(), user: 'nobody',
      database: 'none', connectionTimeoutMillis: 2_000 })
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    const metrics = new BankMetrics()
    metrics.readFrom(db)
    const summary = new SummaryService(db, new ManualClock(), new SouthAfricanCalendar([]),
      { cyclesSast: [] })
    metrics.readBusinessFrom(() => summary.figures())
    server = await serveMetrics(metrics, '127.0.0.1', 0, createLogger('silent'))
    const f = await scrape(server.port)
    assert.equal(value(f, 'bank_business_metrics_up'), 0)
    for (const name of ['bank_pending_eft_count', 'bank_money_held_cents', 'bank_ledger_verify_ok',
      'bank_review_queue', 'bank_jobs', 'bank_webhook_deliveries', 'bank_webhook_endpoints',
      'bank_rail_refused_files']) {
      assert.deepEqual(f.get(name)?.samples, [], `${name} is left out`)
    }
    assert.ok(f.has('bank_process_cpu_user_seconds_total'), 'the process figures are served')
  })
}
