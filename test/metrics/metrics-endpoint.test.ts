import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity } from '../support/fixtures.ts'
import { transferBody } from '../transfers/helpers.ts'
import { parsePrometheusText, type Family } from './prometheus-text.ts'

// BANK_METRICS_PORT serves Prometheus text at /metrics: requests and latency per endpoint,
// ledger batch sizes and times, job queue depth and age, webhook deliveries by state. The
// test scrapes it over real HTTP after real requests and reads it with a Prometheus text
// parser, so a malformed exposition fails here.

const tb = useTestBank({ env: { BANK_METRICS_PORT: '0' } })
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

async function scrape(): Promise<Map<string, Family>> {
  const port = tb.bank.metricsPort
  assert.ok(port, 'the bank serves metrics when BANK_METRICS_PORT is set')
  const response = await fetch(`http://127.0.0.1:${port}/metrics`)
  assert.equal(response.status, 200)
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain/)
  return parsePrometheusText(await response.text())
}

/**
 * The value of the family's sample named `name` (a histogram's `<family>_count`, …) with these
 * labels.
 */
const valueOf = (family: Family | undefined, name: string, labels: Record<string, string>) =>
  family?.samples.find((s) => s.name === name && Object.entries(labels).every(
    ([k, v]) => s.labels[k] === v))?.value

test('metrics - requests are counted per endpoint and code, with a latency histogram', async () => {
  await p.client.entities.create(businessEntity())
  await p.client.entities.create(businessEntity())
  const refused = await rawRequest(tb, `svc.entity.${p.partnerId}.info`,
    JSON.stringify({ entity_id: randomUUID() }), { token: p.token })
  assert.equal(refused.code, 404)
  const families = await scrape()
  const requests = families.get('bank_requests_total')
  assert.equal(requests?.type, 'counter')
  assert.ok(valueOf(requests, 'bank_requests_total',
    { endpoint: 'entity_create', code: '200' })! >= 2)
  assert.equal(valueOf(requests, 'bank_requests_total', { endpoint: 'entity_info', code: '404' }),
    1)
  const latency = families.get('bank_request_duration_seconds')
  assert.equal(latency?.type, 'histogram')
  assert.ok(valueOf(latency, 'bank_request_duration_seconds_count',
    { endpoint: 'entity_create' })! >= 2)
  assert.equal(valueOf(latency, 'bank_request_duration_seconds_bucket',
    { endpoint: 'entity_create', le: '+Inf' }),
    valueOf(latency, 'bank_request_duration_seconds_count', { endpoint: 'entity_create' }))
})

test('metrics - ledger batches, job queues and webhook deliveries are reported', async () => {
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  const accountId = accounts[0]!.account_id
  await tb.operator.accounts.deposit({ account_id: accountId, amount: 1_000_000 })
  await p.client.accounts.transfer(transferBody(accountId, { amount: 1_000 }))
  const families = await scrape()
  const size = families.get('bank_ledger_batch_size')
  assert.equal(size?.type, 'histogram')
  assert.ok(valueOf(size, 'bank_ledger_batch_size_count', { committer: 'reserve' })! >= 1,
    'the transfer was written in a reserve batch')
  assert.equal(families.get('bank_jobs')?.type, 'gauge')
  assert.equal(families.get('bank_jobs_oldest_due_age_seconds')?.type, 'gauge')
  assert.equal(families.get('bank_webhook_deliveries')?.type, 'gauge')
  assert.equal(families.get('bank_webhook_endpoints')?.type, 'gauge')
  assert.ok(families.has('bank_process_cpu_user_seconds_total'), 'the process figures are included')
})

test('metrics - the rail: messages written and applied, none unanswered after a clearing run', async () => {
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  const accountId = accounts[0]!.account_id
  await tb.operator.accounts.deposit({ account_id: accountId, amount: 1_000_000 })
  await p.client.accounts.transfer(transferBody(accountId, { amount: 1_000 }))
  const before = valueOf((await scrape()).get('bank_rail_unanswered_payouts'),
    'bank_rail_unanswered_payouts', { measure: 'count' })
  assert.equal(before, 0, 'an EFT waiting for its cycle has not been sent')
  await tb.operator.clearing.run()
  const families = await scrape()
  const messages = families.get('bank_rail_messages')
  assert.equal(messages?.type, 'gauge')
  assert.ok(valueOf(messages, 'bank_rail_messages',
    { direction: 'out', kind: 'pacs.008.001.09' })! >= 1, 'the cycle wrote a pacs.008')
  assert.ok(valueOf(messages, 'bank_rail_messages',
    { direction: 'in', kind: 'pacs.002.001.11' })! >= 1, 'its status report was applied')
  assert.equal(valueOf(families.get('bank_rail_unanswered_payouts'),
    'bank_rail_unanswered_payouts', { measure: 'count' }), 0)
  assert.equal(valueOf(families.get('bank_rail_refused_files'), 'bank_rail_refused_files', {}), 0)
})

test('metrics - any other path is a 404', async () => {
  const response = await fetch(`http://127.0.0.1:${tb.bank.metricsPort}/other`)
  assert.equal(response.status, 404)
  await response.text()
})
