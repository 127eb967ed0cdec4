// `npm run bench:webhooks`: how long a healthy partner's webhooks take to arrive beside
// 0, 3 and 30 partners whose receivers hang (accept the connection, never answer), each
// with 12 resources' events waiting (the case of issue 45: with 3 delivery slots a healthy
// partner then received nothing for 117 s). Never part of `npm test`; prints, never fails.
//
// Each case gets a fresh PostgreSQL database with the bank's migrations and one instance of
// the bank's delivery as the service runs it (job runner polling every BENCH_POLL_MS,
// outbox dispatcher, webhook service with the default limits: 10 s attempts, the delivery
// pool of BANK_WEBHOOK_CONCURRENCY's default, one delivery per partner at once, the circuit
// breaker) on the system clock, and real receivers on 127.0.0.1. The hanging partners'
// events are committed first; then the healthy partner's, one every BENCH_INTERVAL_MS on a
// resource of its own, BENCH_EVENTS of them. Its delay is from an event's commit to its
// arrival at the receiver. Prints one JSON line per case: p50, p99 and max delay (ms), and
// the hanging endpoints' breaker states at the end.
//
//   npm run bench:webhooks
//
// Settings (environment): BENCH_DATABASE_URL (admin connection; databases are created and
// dropped), BENCH_EVENTS (100), BENCH_INTERVAL_MS (100), BENCH_POLL_MS (1000, the default
// BANK_JOBS_POLL_MS).
import { randomBytes, randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import pg from 'pg'
import { systemClock } from '../src/clock.ts'
import { openDatabase } from '../src/db/database.ts'
import { appendEvents, EventDispatcher, type NewEvent } from '../src/events/index.ts'
import { JobRunner } from '../src/jobs/job-runner.ts'
import { createLogger } from '../src/logger.ts'
import { migrations } from '../src/modules.ts'
import type { Database } from '../src/schema.ts'
import { SecretBox } from '../src/secrets/secret-box.ts'
import { HttpWebhookSender } from '../src/webhooks/webhook-sender.ts'
import { WebhookSecrets } from '../src/webhooks/webhook-secrets.ts'
import { WebhookService } from '../src/webhooks/webhook-service.ts'
import { webhook_limits_default } from '../src/webhooks/webhook-limits.ts'
import type { Kysely } from 'kysely'

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const events = Number(process.env.BENCH_EVENTS ?? 100)
const intervalMs = Number(process.env.BENCH_INTERVAL_MS ?? 100)
const pollMs = Number(process.env.BENCH_POLL_MS ?? 1000)
const hangingLanes = 12

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try { await client.query(statement) } finally { await client.end() }
}

async function listen(handler: http.RequestListener): Promise<{ url: string;
    close: () => Promise<void> }> {
  const server = http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  return { url, close: () => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(() => resolve()))
  } }
}

async function addPartner(db: Kysely<Database>, secrets: WebhookSecrets,
    url: string): Promise<string> {
  const id = randomUUID()
  const now = new Date()
  await db.insertInto('partners').values({ id, name: `bench ${id.slice(0, 8)}`,
    email: 'bench@example.com', root_entity_id: randomUUID(), created_at: now } as never)
    .execute()
  await db.transaction().execute((trx) => secrets.create(trx, id))
  await db.insertInto('webhook_endpoints').values({ partner_id: id, url, updated_at: now })
    .execute()
  return id
}

const event = (partnerId: string, resourceId: string): NewEvent => ({
  type: 'payment.success', partner_id: partnerId, resource_id: resourceId,
  data: { bulk_payment_id: resourceId, payment_id: randomUUID(), amount: '100',
    status: 'successful' },
  occurred_at: new Date(),
})

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN

/**
 * The healthy partner's events, one every `intervalMs` on a resource of its own, until all
 * have arrived: their delays from commit to arrival (ms).
 */
async function healthyStream(db: Kysely<Database>, secrets: WebhookSecrets, runner: JobRunner,
    closers: Array<() => Promise<void>>): Promise<number[]> {
  const committed = new Map<string, number>()
  const delays: number[] = []
  let resolveAll!: () => void
  const all = new Promise<void>((resolve) => (resolveAll = resolve))
  const healthyReceiver = await listen((request, response) => {
    request.resume()
    request.on('end', () => {
      const id = String(request.headers['webhook-id'])
      const at = committed.get(id)
      if (at !== undefined && committed.delete(id)) delays.push(Date.now() - at)
      response.writeHead(200).end('ok')
      if (delays.length === events) resolveAll()
    })
  })
  closers.push(healthyReceiver.close)
  const healthy = await addPartner(db, secrets, healthyReceiver.url)
  runner.start()
  closers.push(() => runner.stop())
  for (let i = 0; i < events; i++) {
    const [id] = await db.transaction().execute((trx) => appendEvents(trx,
      [event(healthy, `bulk-${randomUUID()}`)]))
    committed.set(id!, Date.now())
    runner.kick()
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
  await all
  return delays
}

async function runCase(hanging: number): Promise<void> {
  const dbName = `bank_bench_webhooks_${randomBytes(4).toString('hex')}`
  const dbUrl = new URL(adminUrl)
  dbUrl.pathname = `/${dbName}`
  await admin(`create database ${dbName}`)
  const handle = await openDatabase<Database>({ migrations, databaseUrl: dbUrl.toString(),
    pgliteDir: 'memory://', poolMax: 10 })
  const closers: Array<() => Promise<void>> = []
  try {
    const db = handle.db
    const log = createLogger('silent')
    const runner = new JobRunner(db, systemClock, log, { poll_ms: pollMs, concurrency_max: 4 })
    const dispatcher = new EventDispatcher(db)
    runner.dispatchEventsWith(dispatcher)
    const secrets = new WebhookSecrets(db, systemClock, new SecretBox({
      key: randomBytes(32), dataDir: `/tmp/${dbName}` }))
    const webhooks = new WebhookService(db, systemClock, runner, dispatcher, secrets,
      new HttpWebhookSender({ timeout_ms: webhook_limits_default.attempt_timeout_ms }),
      { sandbox: true, limits: webhook_limits_default })
    const stuck: string[] = []
    for (let i = 0; i < hanging; i++) {
      const receiver = await listen((request) => request.resume())
      closers.push(receiver.close)
      const id = await addPartner(db, secrets, receiver.url)
      stuck.push(id)
      await db.transaction().execute((trx) => appendEvents(trx, Array.from(
        { length: hangingLanes }, () => event(id, `bulk-${randomUUID()}`))))
    }
    const delays = await healthyStream(db, secrets, runner, closers)
    const sorted = [...delays].sort((a, b) => a - b)
    const { endpoints } = await webhooks.listEndpoints({ limit: 200 })
    const states: Record<string, number> = {}
    for (const e of endpoints) states[e.state] = (states[e.state] ?? 0) + 1
    console.log(JSON.stringify({ hanging_partners: hanging, events, p50_ms: percentile(sorted, 0.5),
      p99_ms: percentile(sorted, 0.99), max_ms: sorted.at(-1), hanging_endpoints: states }))
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined)
    await handle.close()
    await admin(`drop database if exists ${dbName} with (force)`)
  }
}

for (const hanging of [0, 3, 30]) await runCase(hanging)
